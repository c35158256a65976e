"""Write it yourself: seven pieces of the Transformer to write, and the checks that say what is wrong.

`python -m exercises check [NAME]` checks exercises/exercises.py; the notebook exercises/exercises.ipynb
walks through the same seven (`from exercises.checks import check`). Nothing outside tests/ imports this package.
"""
