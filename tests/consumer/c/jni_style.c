/* Stands for an app's JNI library: it links edgeattn and exports only its own entry points. */
#include "edgeattn/edgeattn.h"

__attribute__((visibility("default"))) const char* Java_org_example_EdgeAttn_version(void) {
  return edgeattn_version();
}
