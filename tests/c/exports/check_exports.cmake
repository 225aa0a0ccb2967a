# cmake -DNM=nm -DLIB=libprobe.so -P check_exports.cmake
# Fails unless LIB exports robocache_voxelize_hard_packed and robocache_align
# and nothing else of the library's: no rc_* internals, no C++ symbols of the
# CUDA code (CUB's template statics among them), no compiler-made globals.
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIB} failed")
endif()
foreach(want robocache_voxelize_hard_packed robocache_align)
  if(NOT syms MATCHES " ${want}\n")
    message(FATAL_ERROR "${LIB} does not export ${want}:\n${syms}")
  endif()
endforeach()
# Every defined symbol but the linker's own must be public API: this also
# catches globals the compiler makes, such as GCC's named OpenMP critical locks.
string(REGEX MATCHALL "[^\n]* [^\n]*\n" lines "${syms}")
set(leaked "")
foreach(line IN LISTS lines)
  if(NOT line MATCHES " (robocache_[A-Za-z0-9_]*|_init|_fini|_edata|_end|__bss_start)\n$")
    string(APPEND leaked "${line}")
  endif()
endforeach()
if(leaked)
  message(FATAL_ERROR "${LIB} exports internal symbols:\n${leaked}")
endif()
