"""The domain: surfaces (the one walker), normalisation, decoding, matching, signals, records, and the domain built-ins and facts registered into the language."""
