"""Scripts run by hand (and the hostile-file corpus the tests share)."""
