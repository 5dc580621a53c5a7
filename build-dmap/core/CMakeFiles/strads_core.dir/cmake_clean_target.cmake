file(REMOVE_RECURSE
  "libstrads_core.a"
)
