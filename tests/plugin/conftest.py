"""Plugin tests run inner pytest sessions through ``pytester`` (in-process unless noted)."""
