"""Rows and row builders that dialect tables share, or that one large table keeps apart."""
