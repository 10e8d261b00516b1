"""Converters shared by the dialects of one wire family, and the stream framings."""
