"""IO500: result summaries and result.txt of each era, and the IOR outputs beside them."""
