"""The reference car-loan study (Tominaga et al. 2024, Appendix B): its page texts in English
and Japanese, the Japanese labels of its schema, and the one function that makes it.

The schema itself (items, screening, scales) comes from `recourse_engine.carloan_schema()`;
these are the texts the schema does not carry. `carloan_study_create` is used by the demo
command, the console's setup page and the API's create endpoint alike: when each built the
study its own way, the console's Japanese study lost the Japanese item labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recourse_engine import carloan_schema
from studyapp.models import Study
from studyapp.studies.services import study_create_from_schema

CONSENT_VERSION = "carloan-2024-1"

#: the options of both hours-per-day items (working, teleworking), in Japanese
HOURS_JA = ["0〜2時間", "2〜4時間", "4〜6時間", "6〜8時間", "8〜10時間", "10〜12時間", "12時間以上"]

TEXTS: dict[str, str] = {
    "welcome": (
        "Thank you for your interest in this study about how people judge the advice an AI "
        "system gives after rejecting a loan application. It takes about 15 minutes."
    ),
    "consent": (
        "This study is run for research on algorithmic recourse. You will answer a few "
        "screening questions, describe your own profile (education, work, skills) and rate "
        "five action plans produced by an AI system. Your answers are stored under a "
        "pseudonymous id and analysed only in aggregate; the panel id you arrived with is kept "
        "apart from your answers. You may stop at any time by closing this page. By ticking the "
        "box you confirm that you understand the purpose and content of this survey and agree "
        "to take part."
    ),
    "scenario": (
        "Please respond to the following questions, imagining the scenario below.\n\n"
        "Currently, you are considering taking out a two-year car loan to purchase a car "
        "equivalent to one-third of your annual income.\n\n"
        "Right now, you are at a financial institution undergoing a loan assessment. In this "
        "assessment, an AI system determines the approval or denial of the loan based on your "
        "profile data.\n\n"
        "To undergo this evaluation, you have decided to submit your own profile data."
    ),
    "profile_intro": "Please select the option that applies to you for each of the following items.",
    "rejection": (
        "You had come for a two-year loan assessment with the intention of purchasing a car "
        "equivalent to one-third of your annual income. But unfortunately, you were declined "
        "in the loan assessment."
    ),
    "waiting": (
        "The AI system used in this assessment can provide a failed applicant with an ideal "
        "profile for her/his current profile, as a plan of action to ensure that her/his next "
        "application will be approved. It is preparing several action plans for you now."
    ),
    "plan_intro": (
        "Here is plan {position} of {total}, created by AI. If you had the profile shown on the "
        "right, your application would have been approved. The AI is proposing action plans "
        "with minimal change costs to reduce the burden on applicants as much as possible."
    ),
    "no_recourse": (
        "We are sorry: the AI system could not find an action plan that fits your profile. "
        "This is not a problem with your answers. The research team has been notified; you "
        "will be credited for your participation with the code below."
    ),
    "completion": "Thank you for taking part. Your completion code is below.",
    "screenout": (
        "Thank you for your interest. Unfortunately you do not meet the conditions of this "
        "study. Please return to the panel with the code below."
    ),
}

TEXTS.update(
    {
        "quota_full": (
            "Thank you for your interest. We already have enough participants with your "
            "profile for this study. Please return to the panel with the code below."
        ),
        "failed_attention": (
            "Some of the check questions were not answered as instructed, so the study ends "
            "here. Please return to the panel with the code below."
        ),
        "withdrawn": (
            "You have withdrawn from the study and your answers have been deleted. Thank you "
            "for your time. Please return to the panel with the code below."
        ),
    }
)

#: the same texts in Japanese (the reference study ran in Japanese); same keys as TEXTS
TEXTS_JA: dict[str, str] = {
    "welcome": (
        "本調査にご関心をお寄せいただき、ありがとうございます。本調査は、ローンの審査で否決された"
        "後にAIシステムが示す助言を、人がどのように評価するかについての調査です。"
        "所要時間は約15分です。"
    ),
    "consent": (
        "本調査は、アルゴリズミック・リコースに関する研究のために実施されます。いくつかの"
        "スクリーニング質問に回答し、ご自身のプロフィール（学歴、仕事、スキル）を入力したうえで、"
        "AIシステムが作成した5つの行動プランを評価していただきます。回答は仮名のIDで保存され、"
        "集計された形でのみ分析されます。参加時のパネルIDは回答とは分けて保管されます。"
        "このページを閉じることで、いつでも参加を中止できます。チェックボックスにチェックを"
        "入れることで、本調査の目的と内容を理解し、参加に同意したものとみなします。"
    ),
    "scenario": (
        "以下のシナリオを想像しながら、質問に回答してください。\n\n"
        "現在、あなたは年収の3分の1に相当する自動車を購入するため、2年間の自動車ローンの"
        "利用を検討しています。\n\n"
        "いま、あなたは金融機関でローンの審査を受けています。この審査では、AIシステムが"
        "あなたのプロフィールデータに基づいてローンの承認または否決を判断します。\n\n"
        "この審査を受けるため、あなたはご自身のプロフィールデータを提出することにしました。"
    ),
    "profile_intro": "以下の各項目について、あなたに当てはまる選択肢を選んでください。",
    "rejection": (
        "あなたは年収の3分の1に相当する自動車を購入するつもりで、2年間のローンの審査を"
        "受けに来ました。しかし残念ながら、ローンの審査で否決されました。"
    ),
    "waiting": (
        "この審査で使われているAIシステムは、否決された申込者に対して、次回の申込みで承認"
        "されるための行動プランとして、現在のプロフィールに対する理想のプロフィールを示すことが"
        "できます。いま、あなたのための行動プランをいくつか作成しています。"
    ),
    "plan_intro": (
        "AIが作成したプラン {position}/{total} です。右側に示したプロフィールであれば、"
        "あなたの申込みは承認されていました。AIは、申込者の負担をできるだけ減らすため、"
        "変更にかかるコストが最小になる行動プランを提案しています。"
    ),
    "no_recourse": (
        "申し訳ありません。AIシステムは、あなたのプロフィールに合う行動プランを見つけることが"
        "できませんでした。これはあなたの回答の問題ではありません。研究チームには通知済みです。"
        "以下のコードで参加が認められます。"
    ),
    "completion": "ご参加いただき、ありがとうございました。完了コードは以下のとおりです。",
    "screenout": (
        "ご関心をお寄せいただき、ありがとうございます。申し訳ありませんが、本調査の条件に"
        "該当しませんでした。以下のコードを持ってパネルにお戻りください。"
    ),
    "quota_full": (
        "ご関心をお寄せいただき、ありがとうございます。本調査では、あなたと同じ条件の参加者が"
        "すでに必要数に達しました。以下のコードを持ってパネルにお戻りください。"
    ),
    "failed_attention": (
        "確認のための質問に指示どおりの回答がなかったため、調査はここで終了となります。"
        "以下のコードを持ってパネルにお戻りください。"
    ),
    "withdrawn": (
        "調査への参加を取りやめ、あなたの回答は削除されました。お時間をいただき、ありがとう"
        "ございました。以下のコードを持ってパネルにお戻りください。"
    ),
}

#: Japanese labels for the car-loan schema (`translations` key; forms.localized_schema)
SCHEMA_TRANSLATIONS: dict[str, dict] = {
    "ja": {
        "items": {
            "residence_prefecture": {"label": "居住都道府県", "options": ["東京都", "東京都以外"]},
            "residence_type": {"label": "住居の種類", "options": ["持ち家", "賃貸住宅"]},
            "education": {
                "label": "最終学歴",
                "options": ["高校", "短期大学", "大学（学士）", "大学院（修士）", "大学院（博士）"],
            },
            "workplace": {"label": "勤務先", "options": ["民間企業", "公的機関"]},
            "position": {
                "label": "役職",
                "options": [
                    "一般社員",
                    "主任",
                    "係長",
                    "課長代理",
                    "課長",
                    "次長",
                    "部長",
                    "取締役",
                    "常務取締役",
                    "社長",
                ],
            },  # fmt: skip
            "service_years": {
                "label": "勤続年数",
                "options": ["0〜1年", "1〜3年", "3〜5年", "5〜10年", "10〜20年", "20年以上"],
            },
            "management_career": {
                "label": "管理職経験",
                "options": [
                    "なし",
                    "0〜1年",
                    "1〜3年",
                    "3〜5年",
                    "5〜10年",
                    "10〜20年",
                    "20年以上",
                ],
            },  # fmt: skip
            "working_hours": {
                "label": "1日の労働時間",
                "options": HOURS_JA,
            },  # fmt: skip
            "teleworking_hours": {
                "label": "1日のテレワーク時間",
                "options": HOURS_JA,
            },  # fmt: skip
            "side_jobs": {
                "label": "副業の数",
                "options": ["なし", "1つ", "2つ", "3つ", "4つ", "5つ以上"],
            },
            "job_change": {"label": "転職経験", "options": ["なし", "あり"]},
            "overseas_work": {"label": "海外勤務経験", "options": ["なし", "あり"]},
            "overseas_study": {"label": "海外留学経験", "options": ["なし", "あり"]},
            "toeic": {
                "label": "TOEICの最高スコア",
                "options": [
                    "受験なし",
                    "10〜400",
                    "400〜495",
                    "500〜595",
                    "600〜695",
                    "700〜795",
                    "800〜895",
                    "900〜990",
                ],
            },  # fmt: skip
            "facebook": {"label": "Facebookアプリの利用", "options": ["なし", "あり"]},
            "linkedin": {"label": "LinkedInアプリの利用", "options": ["なし", "あり"]},
        },
        "screening": {
            "age": {"label": "あなたの年齢を教えてください。"},
            "gender": {
                "label": "あなたの性別を教えてください。",
                "options": ["女性", "男性", "その他"],
            },
            "occupation": {
                "label": "あなたの職業を教えてください。",
                "options": [
                    "会社員（正社員）",
                    "会社員（契約社員）",
                    "会社員（派遣社員）",
                    "会社員（パートタイム）",
                    "公務員",
                    "自営業・フリーランス",
                    "専業主婦・主夫",
                    "パート・アルバイト",
                    "学生",
                    "無職・退職者",
                    "その他",
                ],
            },  # fmt: skip
            "income": {
                "label": "あなたの年収（円）を教えてください。",
                "options": [
                    "200万円未満",
                    "200万〜300万円",
                    "300万〜400万円",
                    "400万〜500万円",
                    "500万〜600万円",
                    "600万〜700万円",
                    "700万〜800万円",
                    "800万〜900万円",
                    "900万〜1000万円",
                    "1000万円以上",
                ],
            },  # fmt: skip
            "car_purchase": {
                "label": "自動車の購入についてのお考えを教えてください。",
                "options": [
                    "1年以内に購入する予定である。",
                    "3年以内に購入する予定である。",
                    "5年以内に購入する予定である。",
                    "時期は未定だが、購入する予定である。",
                    "購入する予定はない。",
                ],
            },
            "loans": {
                "label": "現在のローンの状況について、当てはまるものをすべて選んでください。",
                "options": [
                    "カードローン",
                    "自動車ローン",
                    "住宅ローン",
                    "教育ローン",
                    "フリーローン",
                    "事業者ローン",
                    "その他のローン",
                    "ローンは利用していない",
                ],
            },  # fmt: skip
        },
        "evaluation": {
            "scale": [
                "まったくそう思わない",
                "そう思わない",
                "あまりそう思わない",
                "どちらともいえない",
                "ややそう思う",
                "そう思う",
                "とてもそう思う",
            ],  # fmt: skip
            "acceptance_question": (
                "AIシステムのプランは、あなたのローン申込みが否決された理由の説明として妥当ですか？"
            ),
            "action_question": (
                "ローンの承認を得るために、AIシステムが示したプランを実行しようと思いますか？"
            ),
            "impossible_question": (
                "AIシステムが示した各変更項目について、あなたにとって実行が不可能かどうかを"
                "お答えください。（変更された項目についてのみ質問します）"
            ),
            "why_question": "上の質問について、なぜそのように評価したのかを教えてください。",
        },
    }
}


def schema_with_translations(schema: dict) -> dict:
    """The car-loan schema dict with its Japanese labels (`translations`) merged in."""
    return {**schema, "translations": SCHEMA_TRANSLATIONS}


def carloan_schema_dict() -> dict[str, Any]:
    """The car-loan feature schema as a study stores it (with its Japanese labels)."""
    return schema_with_translations(carloan_schema().to_dict())


def carloan_study_create(
    *,
    slug: str,
    title: str,
    language: str = "en",
    owner: Any = None,
    pool: bytes | None = None,
    pool_size: int = 3683,
    settings: Mapping[str, Any] | None = None,
) -> Study:
    """A draft car-loan study: the schema with its translations, the texts in both languages,
    the paper's consent version and design; no pool: a synthetic one of `pool_size` rows.

    `settings` override any of these (e.g. a design, texts, conditions, seed), checked by the
    configuration model like every other study's.
    """
    defaults: dict[str, Any] = {
        "language": language,
        "texts": {"en": dict(TEXTS), "ja": dict(TEXTS_JA)},
        "consent_version": CONSENT_VERSION,
    }
    return study_create_from_schema(
        slug=slug,
        title=title,
        schema=carloan_schema_dict(),
        owner=owner,
        pool=pool,
        pool_size=pool_size,
        settings={**defaults, **(settings or {})},
    )
