"""Pure-Python analysis of study exports: GAMMs, segregation indices, effects of recourses.

Never imports Django; usable from a notebook or a script with no database.
"""
