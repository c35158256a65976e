"""The corpora beyond Multi30k, built from Debian packages and public word lists on the machine that trains:
the Ding dictionary's everyday sentences (everyday_corpus), parallel text from translation catalogues and help
pages (parallel_text), WordNet's example sentences and their back-translation. Each is a command
(`python -m corpora.everyday_corpus ...`) that writes its files under runs/corpora/; data.py reads them."""
