# Examples: a small store master wiring every publication point.
