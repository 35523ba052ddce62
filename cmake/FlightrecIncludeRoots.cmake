# Per-library include roots: includes are spelled from the repository root
# ("recorder/ring_file.h", "analyzer/model/culprit.h"), but no product target
# sees the repository root. flightrec_include_root(target scope dir...) gives
# `target` a root under the build tree in which only the listed source
# directories exist (as symbolic links, at their repository paths), so an
# include of a directory the target was not given (the recorder including
# analyzer/, the analyzer including plugin/, the model including the cli) does
# not resolve: the build fails. A library's root reaches its users through its
# PUBLIC/INTERFACE scope, so the arrows are the link dependencies:
#   format (include/) <- recorder <- plugin;  nccl_abi (plugin/nccl) <- plugin
#   format <- reader <- analysis (model, report) <- cli
function(flightrec_include_root target scope)
  set(_root ${PROJECT_BINARY_DIR}/include_roots/${target})
  foreach(_dir IN LISTS ARGN)
    get_filename_component(_parent ${_root}/${_dir} DIRECTORY)
    file(MAKE_DIRECTORY ${_parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${_dir} ${_root}/${_dir} SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${_root}>)
endfunction()
