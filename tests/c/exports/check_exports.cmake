# cmake -DNM=nm -DLIB=libprobe.so -P check_exports.cmake
# Fails unless LIB exports robocache_voxelize_hard_packed and robocache_align
# and no symbol of the library's internals: rc_* functions, or C++ symbols
# of the CUDA code (CUB's template statics among them), which are mangled
# _Z names mentioning cub, thrust or rc_.
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIB} failed")
endif()
foreach(want robocache_voxelize_hard_packed robocache_align)
  if(NOT syms MATCHES " ${want}\n")
    message(FATAL_ERROR "${LIB} does not export ${want}:\n${syms}")
  endif()
endforeach()
string(REGEX MATCHALL "[^\n]* (rc_[A-Za-z0-9_]*|_Z[A-Za-z0-9_]*(cub|thrust|rc_)[A-Za-z0-9_]*)\n"
       leaked "${syms}")
if(leaked)
  message(FATAL_ERROR "${LIB} exports internal symbols:\n${leaked}")
endif()
