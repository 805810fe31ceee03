"""Screening: volunteers vote whether keyword candidates are relevant; leads settle disputes."""
