// What a test must know about a sanitizer build (configure
// --enable-sanitizers defines TM_SANITIZERS in config.h).
#pragma once

#include "config.h"

namespace trainmover::testing {

#ifdef TM_SANITIZERS
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// UBSan's vptr check opens a pipe to find out whether memory is readable;
// with every descriptor in use it reports each virtual call as a call on an
// invalid object. Descriptor exhaustion is tested in the plain build.
inline constexpr const char* kNeedsFreeDescriptors =
    "descriptor exhaustion is not testable under UBSan (its vptr check needs a free descriptor)";

}  // namespace trainmover::testing
