"""Write it yourself: seven pieces of the Transformer to write, and the checks that say what is wrong.

`python -m exercises check [NAME]` checks exercises/exercises.py; the notebook exercises/exercises.ipynb
walks through the same seven (`from exercises.checks import check`). The checks speak English or Chinese
(`--lang zh-CN`, or EXERCISES_LANG / LANG); exercises/exercises.zh-CN.ipynb is the Chinese notebook.
Nothing outside tests/ imports this package.
"""
