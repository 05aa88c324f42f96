// fp16 keys and values hold |x| < 65520 (larger values round to infinity): a projected key or
// value past it would be stored as infinity and turn the call's output into NaN with no error.
// The check runs after the projections and before anything is packed, so that a refused call
// leaves a KV cache exactly as it was (its lengths are updated only after the call).
#ifndef EDGEATTN_RUNTIME_KV_RANGE_CHECK_H_
#define EDGEATTN_RUNTIME_KV_RANGE_CHECK_H_

#include "runtime/forward_phases.h"

namespace edgeattn {

// For an fp16 attention kernel: throws edgeattn::Error naming the input (key_input for keys,
// value_input for values), the batch item, position, key/value head, column and value of the
// first projected key or value that fp16 cannot hold. Other formats: nothing to check.
void CheckKeysValuesFitFp16(const ForwardPass& pass, const char* key_input,
                            const char* value_input);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_KV_RANGE_CHECK_H_
