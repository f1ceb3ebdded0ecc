"""mockkafka: an in-process fake Apache Kafka cluster for tests."""
