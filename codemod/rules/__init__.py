"""The rules: one module each, named after the rule, found by ``rules.registry`` (no list to keep
in sync). ``safety`` decides safe / unsafe / manual / skipped for all of them."""
