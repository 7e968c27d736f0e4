"""Layer 4, output: format rendered modules, record them in the manifest, reuse what an earlier
run made, write a folder all or nothing, and compare it with what generation would write."""
