// Head concatenation: per-head outputs [h][rows][dk] -> one [rows][h * dk] matrix, the input of
// the output projection. The attention core fuses this store into its epilogue (with the
// softmax normalisation); this entry point serves other layouts and tests.
#ifndef EDGEATTN_SIMD_CONCAT_H_
#define EDGEATTN_SIMD_CONCAT_H_

#include <stddef.h>

namespace edgeattn {
namespace simd {

// heads: num_heads blocks of rows x dk floats, each block head_stride floats apart and each row
// dk floats apart. out: rows of ldo floats (ldo >= num_heads * dk); head i goes to columns
// [i * dk, (i + 1) * dk). Nothing outside those columns is written.
void ConcatHeadsF32(const float* heads, size_t num_heads, size_t rows, size_t dk,
                    size_t head_stride, float* out, size_t ldo);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_CONCAT_H_
