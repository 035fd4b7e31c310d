"""Builds and publishes a course's coursepack offline bundles when Studio publishes it."""
