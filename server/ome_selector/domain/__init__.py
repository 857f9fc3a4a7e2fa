"""Typed domain objects, values (versions, sizes, quantities) and the errors of the pure core; imports nothing above."""
