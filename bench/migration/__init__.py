"""Helpers of ``bench/migration_compare.py``: preparing rewritten library copies, the model
families and helpers run in each copy, and comparing what they leave behind."""
