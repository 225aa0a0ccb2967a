/* Runtime version string. */
#include "robocache.h"

#define RC_STR2(x) #x
#define RC_STR(x) RC_STR2(x)

const char *robocache_version_string(void) {
  return RC_STR(ROBOCACHE_VERSION_MAJOR) "." RC_STR(ROBOCACHE_VERSION_MINOR) "." RC_STR(
      ROBOCACHE_VERSION_PATCH);
}
