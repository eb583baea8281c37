from django.apps import AppConfig


class StudyappConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "studyapp"
    verbose_name = "Recourse studies"

    def ready(self) -> None:
        # the researcher console registers its admin pages from its own package
        from studyapp.console import admin  # noqa: F401

        # deletion receipts join the study export (`studyapp.export.extensions`)
        from studyapp.export.extensions import register
        from studyapp.retention.receipts import receipt_tables

        register(receipt_tables)

        # the integrity signals' files join it too (`studyapp.integrity.export`)
        from studyapp.integrity.export import integrity_tables

        register(integrity_tables)
        # a multi-wave study's waves and changes (`studyapp.export.wave_tables`)
        from studyapp.export.wave_tables import wave_tables

        register(wave_tables)
        # every change to a study's definition is kept as a version (`studyapp.prereg`)
        from studyapp.prereg.signals import connect

        connect()
