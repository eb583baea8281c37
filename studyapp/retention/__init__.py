"""Data protection: a study's retention rules applied on schedule, withdrawal and deletion
on request, each deletion with a receipt (docs/data-protection.md).

`classes` holds the data classes as one table (what each holds, who still holds it, how it
is erased); `service` erases classes for some participants and applies a study's rules at a
given time, in one transaction per study; `export_files` registers the exports written to
disk and deletes their files when the data in them is due; `receipts` is the receipts'
table for the console and the export; `tasks` is the daily Celery beat task.
"""
