/* Intentionally empty: see module.modulemap. The C shim (CDockCV) includes OpenCV's own headers. */
