"""The audit dashboard: server-rendered pages (TestClient) and the same pages in headless Chromium
(Debian's package, driven by Playwright), with screenshots committed under benchmarks/results/."""

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from loopback import on_loopback
from test_execute import TWO_HOP, two_hop_llm
from test_service import KEYS, POLICY, SERIAL, bearer, customers_llm, key_entries

from lakeplanner.service.app import create_app
from lakeplanner.service.settings import ServeSettings

SCREENSHOTS = Path(__file__).parent.parent / "benchmarks" / "results"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def dashboard(sample_lake, tmp_path):
    lake, _ = sample_lake
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    settings = ServeSettings(api_keys_json=key_entries(), policy=policy)
    app = create_app(lake, settings, llm=two_hop_llm(), exec_settings=SERIAL, warm=False)
    with TestClient(app) as client:
        answered = client.post(
            "/v1/ask", json={"question": TWO_HOP, "use_cache": False, "role": "analyst"}, headers=bearer("alice")
        ).json()
        yield client, answered


def test_the_list_shows_answers_and_filters_them(dashboard):
    client, answered = dashboard
    page = client.get("/audit", headers=bearer("audrey"))
    assert page.status_code == 200 and TWO_HOP.replace("'", "&#39;") in page.text
    assert f'href="/audit/{answered["trace_id"]}"' in page.text and "alice" in page.text
    assert answered["trace_id"] not in client.get("/audit?principal=nobody", headers=bearer("audrey")).text
    assert answered["trace_id"] in client.get("/audit?source=documents_contracts", headers=bearer("audrey")).text
    assert answered["trace_id"] not in client.get("/audit?abstained=true", headers=bearer("audrey")).text
    assert answered["trace_id"] not in client.get("/audit?until=2000-01-01", headers=bearer("audrey")).text


def test_one_answer_shows_its_sql_snapshots_evidence_calls_and_replay(dashboard):
    client, answered = dashboard
    page = client.get(f"/audit/{answered['trace_id']}", headers=bearer("audrey")).text
    assert '<svg id="dag"' in page and "$var_2 · vector" in page
    assert "INV-1078" in page.split('<pre class="sql">')[1].split("</pre>")[0] and 'class="snapshot"' in page
    assert "<mark>" in page and "Net 45" in page.split("<mark>")[1].split("</mark>")[0]
    assert 'id="llm-calls"' in page and "fake" in page
    replayed = client.post(f"/audit/{answered['trace_id']}/replay", headers=bearer("audrey")).text
    assert 'id="replay-report"' in replayed and "mismatch" not in replayed


def test_the_dashboard_needs_the_audit_right(dashboard):
    client, answered = dashboard
    assert client.get("/audit", headers=bearer("bob")).status_code == 403
    assert client.get(f"/audit/{answered['trace_id']}", headers=bearer("bob")).status_code == 403
    signed_out = client.get("/audit", follow_redirects=False)
    assert signed_out.status_code == 303 and signed_out.headers["location"] == "/audit/login"
    wrong = client.post("/audit/login", data={"token": "lpk_nope"})
    assert wrong.status_code == 401 and "not known" in wrong.text


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (make test installs it)")
def test_the_dashboard_in_a_real_browser(sample_lake, tmp_path):
    from playwright.sync_api import sync_playwright

    lake, _ = sample_lake
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    settings = ServeSettings(api_keys_json=key_entries(), policy=policy)
    app = create_app(lake, settings, llm=two_hop_llm(), exec_settings=SERIAL, warm=False)
    with on_loopback(app) as url:
        with TestClient(app) as client:
            answered = client.post(
                "/v1/ask", json={"question": TWO_HOP, "use_cache": False, "role": "analyst"}, headers=bearer("alice")
            ).json()
            # a second answer under the emea role, read through its row filter
            app.state.runner.executor._llm = customers_llm()
            client.post(
                "/v1/ask", json={"question": "Which customers are there?", "use_cache": False}, headers=bearer("bob")
            )
        flags = [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=flags)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{url}/audit")
            assert page.url.endswith("/audit/login")
            page.fill("input[name=token]", KEYS["bob"])
            page.click("button[type=submit]")
            assert "403" in page.content()  # bob has no auditor role
            page.context.clear_cookies()
            page.goto(f"{url}/audit/login")
            page.fill("input[name=token]", KEYS["audrey"])
            page.click("button[type=submit]")
            page.wait_for_selector("#answers")
            assert page.locator(f"a[href='/audit/{answered['trace_id']}']").count() == 1
            page.screenshot(path=str(SCREENSHOTS / "audit-answers.png"), full_page=True)
            page.fill("input[name=principal]", "bob")
            page.click("form.filters button")
            page.wait_for_selector("#answers")
            assert page.locator(f"a[href='/audit/{answered['trace_id']}']").count() == 0
            assert page.locator("#answers tr").count() >= 2
            page.goto(f"{url}/audit/{answered['trace_id']}")
            assert '"invoices"' in page.locator("pre.sql").first.inner_text()
            assert page.locator(".snapshot").first.inner_text().isdigit()
            assert "Net 45" in page.locator("mark").first.inner_text()
            page.click("#replay")
            page.wait_for_selector("#replay-report")
            assert "mismatch" not in page.locator("#replay-report").inner_text()
            page.screenshot(path=str(SCREENSHOTS / "audit-answer.png"), full_page=True)
            browser.close()
