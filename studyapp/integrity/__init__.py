"""Integrity signals: what the page script (`studyapp/static/studyapp/integrity.js`) records
on the rating and question pages, checked and stored with the page's submit (`record`), and
a per-participant summary of four signals — speeding, pasted answers, free texts identical
to another participant's, straight-lining — for the monitor and the export (`summary`,
`export`). Signals for the researcher to look at, never automatic rejections: nothing here
changes a participant's state, outcome or pay.
"""
