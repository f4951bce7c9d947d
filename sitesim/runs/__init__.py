"""One run from its configuration: users in the loop, trace replay, open versus closed."""
