"""A scripted model that answers every data-recipe prompt plausibly, for end-to-end recipe tests.

``answer(body)`` takes an OpenAI chat-completions request body and returns the message content. The step is
recognised from its prompt (the shipped templates under ``tasks/recipes/prompts``); answers are deterministic
functions of the prompt and the request's ``seed``, so two draws with different seeds differ, as samples of a
real model would, and a repeated request gets the same answer. Revisions carry their seed, and the preference
judge always prefers the revised version, so whether a revision is kept depends on the diversity gain against
the row's pool (:func:`reject_revisions` makes a judge that never prefers them).
"""

from __future__ import annotations

import hashlib
import re

FIRST_NAMES = ("Ilse", "Tomasz", "Amara", "Kenji", "Rosalind", "Mateo")


def _pick(options: tuple[str, ...] | list[str], key: str) -> str:
    return options[int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(options)]


def _field(prompt: str, name: str) -> str | None:
    m = re.search(rf"^{re.escape(name)}: (.+)$", prompt, re.M)
    return m.group(1).strip() if m else None


def _section(prompt: str, start: str, end: str | None = None) -> str:
    body = prompt.split(start, 1)[1] if start in prompt else ""
    return body.split(end, 1)[0] if end and end in body else body


def _draft(prompt: str, seed: int) -> str:
    first = _field(prompt, "First Name") or "Ilse"
    last = _field(prompt, "Last Name") or "Varga"
    phone = _field(prompt, "Phone Number") or "+36 30 418 2297"
    email = _field(prompt, "Email") or "ilse.varga@example.org"
    city = _pick(("Pecs", "Ghent", "Tartu", "Braga"), f"{seed}")
    return (f"Clinic appointment summary\n\nPatient: {first} {last}\nPhone: {phone}\nE-mail: {email}\n\n"
            f"{first} {last} attended the Riverside Family Clinic in {city} on 14 March 2023 at 10:40 for a review of "
            f"a persistent knee injury sustained while cycling. Dr. Halvorsen recorded a blood pressure of 131/86 "
            f"and prescribed naproxen 250 mg twice daily for nine days. A follow-up visit was booked for 2 April "
            f"2023, and the invoice RF-20931 of 84.70 EUR was settled by card at the front desk. The referral to "
            f"physiotherapy at Danube Physio was sent the same afternoon, and the patient asked that letters go to "
            f"the address on Kossuth Street 17 in {city}.")


def answer(body: dict) -> str:
    """The content a plausible model would answer to one recipe request."""
    prompt = str(body["messages"][-1]["content"])
    seed = int(body.get("seed") or 0)
    if prompt.startswith("Invent a complete, realistic"):
        last = _pick(("Varga", "Okonkwo", "Lindqvist", "Ferreira"), f"{seed}")
        return (f"Last Name: {last}\nSex: female\nEthnicity: White\nCitizenship: Hungarian\nID Number: HU-7730418\n"
                f"Phone Number: +36 30 418 {2000 + seed % 7000}\nEmail: {last.lower()}.{seed % 97}@example.org\n"
                "Occupation: logistics planner")
    if "different kinds of" in prompt and "Answer with a numbered list" in prompt:
        return "1. Clinic appointment summary from Riverside Family Clinic\n2. Insurance claim letter from Acme Mutual"
    if prompt.startswith("Profile:") and "situations" in prompt:
        return "1. A follow-up after a cycling accident.\n2. A routine review before a long trip."
    if prompt.startswith("Document type:"):
        return "1. A header block, then a short narrative in a neutral tone.\n2. A table of facts followed by notes."
    if prompt.startswith("Profile:") and "Write a realistic" in prompt:
        return _draft(prompt, seed)
    if prompt.startswith("Here is a document:") and "Revise it" in prompt:
        text = _section(prompt, "Here is a document:\n\n", "\n\nRevise it").strip()
        return f"{text}\nRevision note {seed}: the invoice number was checked against the ledger."
    if prompt.startswith("Two versions of the same document"):
        a = _section(prompt, "Text A:\n", "\n\nText B:")
        b = _section(prompt, "Text B:\n", "\n\nWhich one")
        return "A" if a.count("Revision note") >= b.count("Revision note") else "B"
    if prompt.startswith("Below is a document and a list of facts"):
        return "none"
    if prompt.startswith("Read the document below and list"):
        doc = _section(prompt, "Document:\n", "\n\nWrite one fact")
        facts = {"clinic_name": "Riverside Family Clinic", "visit_date": "14 March 2023", "doctor": "Dr. Halvorsen",
                 "medication": "naproxen 250 mg", "invoice_number": "RF-20931", "invoice_amount": "84.70 EUR",
                 "follow_up_date": "2 April 2023", "street_address": "Kossuth Street 17", "injury": "persistent knee injury"}
        return "\n".join(f"{k}: {v}" for k, v in facts.items() if v in doc) + "\nconsented: yes"
    if prompt.startswith("Here are attributes found in a document"):
        names = re.findall(r"^- (\S+)$", prompt, re.M)
        third = max(1, len(names) // 3)
        parts = [names[:third], names[third : 2 * third], names[2 * third :] or names[:1]]
        return "\n".join(f"{title}: {', '.join(p)}" for title, p in zip(("Identity", "Visit", "Money and places"), parts))
    if prompt.startswith("Here is a document and a list of pieces of information"):
        items = re.findall(r"^- (.+)$", _section(prompt, "Information:\n", "\n\nOrder"), re.M)
        return "\n".join(f"{i + 1}. {name}" for i, name in enumerate(items))
    if prompt.startswith("Find every place in the passage"):
        values = _field(prompt, "Known value") or ""
        chunk = _section(prompt, "Passage:\n", "\n\nList each")
        hits = [v.strip() for v in values.split(";") if v.strip() and v.strip() in chunk]
        return "\n".join(f"- {h}" for h in hits) if hits else "NONE"
    if "could not be found" in prompt or "were not found" in prompt:
        return "NONE"
    if prompt.startswith("A document has to be made less revealing"):
        return "Replace it with a broad description that keeps only the general kind of information."
    if prompt.startswith("Edit the passage below"):
        chunk = _section(prompt, "Passage:\n", "\n\nChange only")
        for span in re.findall(r"^- (.+)$", _section(prompt, "is about:\n", "\n\nPassage:"), re.M):
            chunk = chunk.replace(span, "[removed]")
        return chunk
    if prompt.startswith("Here is a list of instructions for cleaning"):
        return f"Please clean up my document as listed (draw {seed % 1000}): remove or blur the private details."
    return "NONE"


def reject_revisions(body: dict) -> str:
    """:func:`answer`, except that the preference judge always picks the version with fewer revision notes."""
    prompt = str(body["messages"][-1]["content"])
    if prompt.startswith("Two versions of the same document"):
        a = _section(prompt, "Text A:\n", "\n\nText B:")
        b = _section(prompt, "Text B:\n", "\n\nWhich one")
        return "A" if a.count("Revision note") <= b.count("Revision note") else "B"
    return answer(body)
