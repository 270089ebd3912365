"""elbencho: text and CSV results."""
