"""A Structured Streaming job (orders -> per-customer totals) and its tests against mockkafka."""
