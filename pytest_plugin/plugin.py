"""pytest plugin for mockkafka (registered through the ``pytest11`` entry point)."""
