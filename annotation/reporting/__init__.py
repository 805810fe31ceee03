"""Reporting: agreement, reports and statistics with their charts, and the CSV exports."""
