"""Labeling: volunteers take the next item, label it blind, skip it, and edit their labels."""
