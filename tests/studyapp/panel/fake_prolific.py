"""A fake Prolific API for the tests: a small WSGI app, run as its own process on 127.0.0.1,
that follows the documented endpoints the platform uses (https://docs.prolific.com/api-reference),
their status codes, pagination (`results`, `_links.next.href`, `meta.count`) and error bodies
(`{"error": {"status", "error_code", "title", "detail", ...}}`), with faults on demand and
counters of what it received and what it did.

    python tests/studyapp/panel/fake_prolific.py --token TOKEN   # prints "port N", serves

Besides Prolific's own routes it has control routes under `/__fake__/` (no token): make a
study, start a submission as a participant would, return to Prolific with a code (the code's
actions run as Prolific documents them), set a status (timed out, returned), queue faults for
a route (429 with Retry-After, 500, a delay longer than the client waits), read the counters,
reset. Standard library only, so it runs in any Python.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import sys
import threading
import time
from datetime import UTC, datetime
from socketserver import ThreadingMixIn
from typing import Any
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

REJECTION_CATEGORIES = {
    "TOO_QUICKLY", "TOO_SLOWLY", "FAILED_INSTRUCTIONS", "INCOMP_LONGITUDINAL", "FAILED_CHECK",
    "LOW_EFFORT", "MALINGERING", "NO_CODE", "BAD_CODE", "NO_DATA", "UNSUPP_DEVICE", "OTHER",
}  # fmt: skip
ROUTES = [
    ("GET", r"^/api/v1/users/me/$", "me"),
    ("GET", r"^/api/v1/studies/(?P<id>[^/]+)/$", "study"),
    ("PATCH", r"^/api/v1/studies/(?P<id>[^/]+)/$", "study_update"),
    ("GET", r"^/api/v1/studies/(?P<id>[^/]+)/submissions/$", "submissions"),
    ("POST", r"^/api/v1/submissions/bulk-approve/$", "bulk_approve"),
    ("POST", r"^/api/v1/submissions/bonus-payments/$", "bonus_setup"),
    ("POST", r"^/api/v1/submissions/(?P<id>[^/]+)/transition/$", "transition"),
    ("POST", r"^/api/v1/submissions/(?P<id>[^/]+)/request-return/$", "request_return"),
    ("POST", r"^/api/v1/bulk-bonus-payments/(?P<id>[^/]+)/pay/$", "bonus_pay"),
]
_ids = itertools.count(1)


def new_id() -> str:
    return f"{next(_ids):024x}"


def now() -> str:
    return datetime.now(UTC).isoformat()


class Problem(Exception):
    def __init__(self, status: int, detail: Any, title: str = "Request failed") -> None:
        self.status, self.detail, self.title = status, detail, title


def error_body(status: int, detail: Any, title: str) -> dict[str, Any]:
    code = {400: 140001, 401: 100001, 404: 140404, 429: 140429, 500: 150000}.get(status, 140000)
    return {
        "error": {
            "status": status, "error_code": code, "title": title, "detail": detail,
            "additional_information": f"/api/v1/errors/{code}", "traceback": "",
            "interactive": False,
        }
    }  # fmt: skip


class Fake:
    def __init__(self, token: str) -> None:
        self.token = token
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.studies: dict[str, dict[str, Any]] = {}
        self.subs: dict[str, dict[str, Any]] = {}
        self.bulks: dict[str, dict[str, Any]] = {}
        self.faults: dict[str, list[dict[str, Any]]] = {}
        self.received: dict[str, int] = {}
        self.approvals: dict[str, int] = {}
        self.payments: dict[str, int] = {}
        self.transitions: list[dict[str, Any]] = []

    # control ---------------------------------------------------------------------------

    def control(self, name: str, body: dict[str, Any]) -> Any:
        if name == "reset":
            self.reset()
            return {}
        if name == "studies":
            sid = body.get("id") or new_id()
            self.studies[sid] = {
                "id": sid, "name": body.get("name", "study"),
                "status": body.get("status", "UNPUBLISHED"),
                "completion_codes": body.get("completion_codes", []),
            }  # fmt: skip
            return self.studies[sid]
        if name == "start":
            study = self.studies[body["study_id"]]
            sid = new_id()
            self.subs[sid] = {
                "id": sid, "study_id": study["id"], "participant_id": body["participant_id"],
                "status": "ACTIVE", "started_at": now(), "completed_at": None,
                "study_code": None, "return_requested": None, "bonus_payments": [],
            }  # fmt: skip
            return self.subs[sid]
        if name == "complete":  # the participant returns to Prolific with a code (or none)
            sub = self.subs[body["submission_id"]]
            self._complete(sub, body.get("code") or "", actor="participant")
            return sub
        if name == "status":
            self.subs[body["submission_id"]]["status"] = body["status"]
            return self.subs[body["submission_id"]]
        if name == "faults":
            self.faults.setdefault(body["route"], []).extend(body["faults"])
            return {}
        if name == "counts":
            return {
                "received": self.received, "approvals": self.approvals,
                "payments": self.payments, "transitions": self.transitions,
                "studies": self.studies,
            }  # fmt: skip
        if name == "submissions":
            return list(self.subs.values())
        raise Problem(404, f"no control route {name!r}", "Not found")

    def _complete(self, sub: dict[str, Any], code: str, actor: str) -> None:
        study = self.studies[sub["study_id"]]
        sub["completed_at"] = now()
        match = [c for c in study["completion_codes"] if c["code"] == code]
        if not match:
            if actor == "researcher":
                raise Problem(400, {"completion_code": [f"{code!r} is not a code of the study"]})
            sub["study_code"] = code or "NOCODE"
            sub["status"] = "AWAITING REVIEW"
            return
        sub["study_code"] = code
        sub["status"] = "AWAITING REVIEW"
        for action in match[0].get("actions", []):
            kind = action.get("action")
            if kind == "AUTOMATICALLY_APPROVE":
                self._approve(sub)
            elif kind == "FIXED_SCREEN_OUT_PAYMENT":
                sub["status"] = "SCREENED OUT"
            elif kind == "REQUEST_RETURN":
                sub["return_requested"] = now()

    def _approve(self, sub: dict[str, Any]) -> bool:
        if sub["status"] == "APPROVED":
            return False  # documented as idempotent: a repeat is ignored
        if sub["status"] != "AWAITING REVIEW":
            raise Problem(400, f"submission {sub['id']} is {sub['status']}, not AWAITING REVIEW")
        sub["status"] = "APPROVED"
        self.approvals[sub["id"]] = self.approvals.get(sub["id"], 0) + 1
        return True

    # Prolific ---------------------------------------------------------------------------

    def sub_of(self, sid: str) -> dict[str, Any]:
        if sid not in self.subs:
            raise Problem(404, f"Submission {sid} not found", "Not found")
        return self.subs[sid]

    def handle(self, name: str, ids: dict[str, str], body: Any, query: dict, base: str) -> Any:
        if name == "me":
            return {"id": "0" * 24, "email": "researcher@example.org"}
        if name in ("study", "study_update", "submissions"):
            study = self.studies.get(ids["id"])
            if study is None:
                raise Problem(404, f"Study {ids['id']} not found", "Not found")
            if name == "study":
                return study
            if name == "study_update":
                if study["status"] != "UNPUBLISHED" and "completion_codes" in body:
                    raise Problem(400, "completion codes can only change before publishing")
                study.update({k: v for k, v in body.items() if k in ("completion_codes", "name")})
                return study
            return self._page(study["id"], query, base)
        if name == "transition":
            return self._transition(self.sub_of(ids["id"]), body)
        if name == "bulk_approve":
            ids_ = body.get("submission_ids")
            if ids_ is None:
                wanted = set(body.get("participant_ids") or [])
                ids_ = [s["id"] for s in self.subs.values()
                        if s["study_id"] == body.get("study_id") and s["participant_id"] in wanted]  # fmt: skip
            if not ids_:
                raise Problem(400, {"submission_ids": ["This field is required."]})
            for sid in ids_:
                self.sub_of(sid)
            for sid in ids_:
                self._approve(self.subs[sid])
            return "The request to bulk approve is being handled."
        if name == "request_return":
            reasons = body.get("request_return_reasons")
            if not reasons or not isinstance(reasons, list):
                raise Problem(400, {"request_return_reasons": ["This field is required."]})
            sub = self.sub_of(ids["id"])
            sub["return_requested"] = sub["return_requested"] or now()
            return {"id": sub["id"], "status": sub["status"], "participant": sub["participant_id"],
                    "return_requested": sub["return_requested"]}  # fmt: skip
        if name == "bonus_setup":
            return self._bonus_setup(body)
        if name == "bonus_pay":
            bulk = self.bulks.get(ids["id"])
            if bulk is None:
                raise Problem(404, f"Bulk bonus payment {ids['id']} not found", "Not found")
            self.payments[bulk["id"]] = self.payments.get(bulk["id"], 0) + 1  # not idempotent
            for pid, cents in bulk["rows"]:
                for s in self.subs.values():
                    if s["participant_id"] == pid and s["study_id"] == bulk["study"]:
                        s["bonus_payments"].append(cents)
            return (f"Bulk bonus payment with ID {bulk['id']} is being processed asynchronously. "
                    "Payments will be completed shortly.")  # fmt: skip
        raise Problem(404, "Not found", "Not found")

    def _page(self, study_id: str, query: dict, base: str) -> dict[str, Any]:
        rows = [s for s in self.subs.values() if s["study_id"] == study_id]
        try:
            page = int(query.get("page", ["1"])[0])
            size = min(int(query.get("page_size", ["20"])[0]), 200)
        except ValueError as exc:
            raise Problem(400, "page and page_size must be whole numbers") from exc
        if page < 1 or size < 1:
            raise Problem(404, "Invalid page.", "Not found")
        last = max(1, -(-len(rows) // size))
        chunk = rows[(page - 1) * size : page * size]
        link = f"{base}/api/v1/studies/{study_id}/submissions/?page={{}}&page_size={size}"
        short = ["id", "participant_id", "status", "started_at", "completed_at", "study_code",
                 "return_requested"]  # fmt: skip
        return {
            "results": [{k: s[k] for k in short} | {"has_siblings": False} for s in chunk],
            "_links": {
                "self": {"href": link.format(page), "title": "Current"},
                "next": {"href": link.format(page + 1) if page < last else None, "title": "Next"},
                "previous": {
                    "href": link.format(page - 1) if page > 1 else None,
                    "title": "Previous",
                },  # fmt: skip
                "last": {"href": link.format(last), "title": "Last"},
            },
            "meta": {"count": len(rows)},
        }

    def _transition(self, sub: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        action = body.get("action")
        if action == "APPROVE":
            self._approve(sub)
        elif action == "REJECT":
            problems = {}
            if body.get("rejection_category") not in REJECTION_CATEGORIES:
                problems["rejection_category"] = ["A valid rejection category is required."]
            if len(body.get("message") or "") < 100:
                problems["message"] = ["Ensure this field has at least 100 characters."]
            if problems:
                raise Problem(400, problems)
            if sub["status"] != "REJECTED":
                if sub["status"] != "AWAITING REVIEW":
                    raise Problem(400, f"submission is {sub['status']}, not AWAITING REVIEW")
                sub["status"] = "REJECTED"
        elif action == "COMPLETE":
            if sub["status"] not in ("ACTIVE", "AWAITING REVIEW"):
                return self._short(sub)  # a repeat is ignored
            self._complete(sub, body.get("completion_code") or "", actor="researcher")
        else:
            raise Problem(400, {"action": [f"{action!r} is not a valid choice."]})
        self.transitions.append({"id": sub["id"], **body})
        return self._short(sub)

    def _short(self, sub: dict[str, Any]) -> dict[str, Any]:
        return {"id": sub["id"], "started_at": sub["started_at"], "status": sub["status"],
                "study_id": sub["study_id"], "completed_at": sub["completed_at"],
                "entered_code": sub["study_code"], "participant": sub["participant_id"]}  # fmt: skip

    def _bonus_setup(self, body: dict[str, Any]) -> dict[str, Any]:
        study = self.studies.get(body.get("study_id", ""))
        if study is None:
            raise Problem(400, {"study_id": ["Study not found."]})
        rows, bad = [], []
        taken = {s["participant_id"] for s in self.subs.values() if s["study_id"] == study["id"]}
        for line in str(body.get("csv_bonuses", "")).strip().splitlines():
            pid, _, amount = line.partition(",")
            try:
                cents = round(float(amount) * 100)
            except ValueError:
                bad.append(line)
                continue
            if pid not in taken or cents <= 0:
                bad.append(pid)
            rows.append((pid, cents))
        if bad or not rows:
            raise Problem(400, {"csv_bonuses": [f"Invalid participant or submission ids: {bad}"]})
        bid = new_id()
        amount = sum(c for _, c in rows)
        self.bulks[bid] = {"id": bid, "study": study["id"], "rows": rows}
        fees = round(amount / 3, 2)
        return {"id": bid, "study": study["id"], "amount": amount, "fees": fees,
                "total_amount": amount + fees, "vat": 0}  # fmt: skip

    # WSGI -------------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start: Any) -> list[bytes]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        query = parse_qs(environ.get("QUERY_STRING", ""))
        base = f"http://{environ['HTTP_HOST']}"
        try:
            size = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0
        raw = environ["wsgi.input"].read(size) if size else b""
        headers: list[tuple[str, str]] = [("Content-Type", "application/json")]
        try:
            try:
                body = json.loads(raw) if raw else {}
            except ValueError as exc:
                raise Problem(400, "JSON parse error") from exc
            if path.startswith("/__fake__/"):
                with self.lock:
                    data, status = self.control(path.split("/")[2], body), 200
            else:
                data, status = self._api(method, path, body, query, base, environ, headers)
        except Problem as p:
            data, status = error_body(p.status, p.detail, p.title), p.status
        reason = {200: "OK", 201: "Created", 400: "Bad Request", 401: "Unauthorized",
                  404: "Not Found", 405: "Method Not Allowed", 429: "Too Many Requests",
                  500: "Internal Server Error"}.get(status, "Error")  # fmt: skip
        start(f"{status} {reason}", headers)
        return [json.dumps(data).encode()]

    def _api(
        self, method: str, path: str, body: Any, query: dict, base: str, environ: dict,
        headers: list[tuple[str, str]],
    ) -> tuple[Any, int]:  # fmt: skip
        found = [(n, m) for v, p, n in ROUTES if v == method and (m := re.match(p, path))]
        if not found:
            raise Problem(404, "Not found", "Not found")
        name, m = found[0]
        with self.lock:
            self.received[name] = self.received.get(name, 0) + 1
            fault = self.faults.get(name, []).pop(0) if self.faults.get(name) else None
        if environ.get("HTTP_AUTHORIZATION") != f"Token {self.token}":
            raise Problem(401, "Invalid token.", "Unauthorised")
        if fault and "delay" in fault:
            time.sleep(float(fault["delay"]))  # then acts: the client has stopped listening
        elif fault:
            if "retry_after" in fault:
                headers.append(("Retry-After", str(fault["retry_after"])))
            title = "Too many requests" if fault["status"] == 429 else "Server error"
            raise Problem(int(fault["status"]), title, title)
        with self.lock:
            return self.handle(name, m.groupdict(), body, query, base), 200


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = make_server("127.0.0.1", args.port, Fake(args.token), _Server, _Quiet)
    print(f"port {server.server_port}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
