#!/usr/bin/env python3
"""Build ``privasis_sample.jsonl``, the bundled offline sample task of privasis-bench.

The JSONL next to this script is the shipped artifact; this script is how it is authored and kept
consistent.  Run ``python3 tasks/sample/build_sample.py`` from the project root (or anywhere): it
rewrites the JSONL deterministically (same input -> byte-identical output) and refuses to write if a
row is inconsistent (a value missing from its record, an edit that does not apply, a reference
rewrite that leaks a target or loses a keep value).

Every document, person, organisation, number, phone number (555 ranges), e-mail address
(example.* domains) and identifier below is invented for this project.  Rows follow the
Privasis-Zero benchmark row schema (shared/spec/dataset-schema.md) plus a ``category`` column that
uses the paper's primary domain categories.

How a row is written
--------------------
* ``groups`` is the row's ``grouped_annotated_attributes`` ({group: {attr: value}}) and the single
  source of every value.
* ``drop`` / ``abstract`` pick targets from it: a list of ``G(group, *attrs)`` gives a grouped
  selection (``group: true``), a list of attribute names gives a flat ``{name: value}`` selection
  (``group: false``), ``None`` gives ``selected: null``, ``[]`` gives an empty grouped selection and
  ``{}`` (literally ``{"selected": {}, ...}``) an empty flat one.  A literal ``{"selected": ...,
  "group": ...}`` dict is used as-is.
* ``keep`` lists attribute names (their ``group_name`` is the group they are annotated in) or
  ``(name, None)`` pairs for a keep attribute with ``group_name: null``.
* ``edits`` turn ``original`` into the reference ``sanitized_record``: each ``(old, new)`` pair must
  match and replaces every occurrence, in order.
* ``as_json`` names the attribute columns that are serialized as JSON *strings* inside the row.

Corner cases (id -> case); tests/test_sample_data.py checks every id listed here
--------------------------------------------------------------------------------
* attribute columns all JSON strings: sample-fin-01, sample-legal-03, sample-hr-02, sample-gov-02,
  sample-edu-03, sample-personal-02, sample-media-01
* attribute columns all plain objects: every other row except sample-med-02
* mixed forms in one row: sample-med-02 (drop + keep are strings, abstract + grouped are objects)
* ``selected`` as list of groups: e.g. sample-med-01, sample-hr-01, sample-comm-01
* ``selected`` as flat dict: e.g. sample-med-02 (drop), sample-med-04, sample-fin-02, sample-gov-02
* ``selected`` null: sample-legal-01 (abstract), sample-edu-02 (drop)
* ``selected`` empty: sample-fin-02 (abstract ``[]``), sample-personal-03 (drop ``{}``)
* list-of-strings target: sample-med-01, sample-legal-03, sample-hr-01, sample-personal-04, sample-comm-01
* list-of-strings keep: sample-hr-03, sample-gov-01, sample-edu-01, sample-personal-03
* dict target: sample-gov-01 (residential address); dict keep: sample-fin-03 (branch address)
* number target: sample-fin-01 (monthly_rent = 1850); number keep: sample-med-02 (18),
  sample-personal-01 (40), sample-personal-04 (214)
* null target: sample-personal-01 (secondary_phone); null keep: sample-hr-01 (manager_extension)
* same attribute in drop and abstract with different values: sample-med-04 (appointment_date:
  drop "12/03/2024", abstract "March 12, 2024" -> abstract wins)
* no keep attribute: sample-comm-01 (``{}`` object), sample-media-01 (``"{}"`` string)
* grouped multi-attribute targets: most rows, e.g. sample-med-01, sample-legal-02, sample-travel-01;
  individual (flat) targets: e.g. sample-med-03 (abstract), sample-fin-02, sample-tech-01 (abstract)
* longest records (300-600 words): sample-legal-04, sample-med-03, sample-legal-02,
  sample-tech-01, sample-personal-02, sample-gov-03
* Unicode names/places: e.g. sample-med-02 (Agnieszka Wróbel), sample-fin-03 (São Paulo),
  sample-personal-01 (Zoë Małecka), sample-tech-01 (Sigrún Þórsdóttir), sample-edu-03 (Anh Thư Nguyễn)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().with_name("privasis_sample.jsonl")

ATTR_COLUMNS = (
    "attributes_to_drop",
    "attributes_to_abstract",
    "attributes_to_keep",
    "grouped_annotated_attributes",
)
ALL_JSON = ATTR_COLUMNS


def G(group_name: str, *attrs: str) -> tuple:
    """A grouped selection: these attributes of ``group_name`` form one target group."""
    return ("group", group_name, attrs)


def _lookup(groups: dict, name: str, group: str | None = None):
    if group is not None:
        return groups[group][name]
    found = [attrs[name] for attrs in groups.values() if name in attrs]
    if not found:
        raise KeyError(f"attribute {name!r} is not annotated in any group")
    if len({json.dumps(v, sort_keys=True) for v in found}) > 1:
        raise ValueError(f"attribute {name!r} has different values in different groups; use G()")
    return found[0]


def _group_of(groups: dict, name: str) -> str:
    for group_name, attrs in groups.items():
        if name in attrs:
            return group_name
    raise KeyError(name)


def _selection(groups: dict, spec):
    if spec is None:
        return {"selected": None, "group": False}
    if isinstance(spec, dict):
        return spec
    if spec == []:
        return {"selected": [], "group": True}
    if all(isinstance(s, tuple) for s in spec):
        return {
            "selected": [
                {"attrs": {a: _lookup(groups, a, g) for a in attrs}, "group_name": g}
                for _, g, attrs in spec
            ],
            "group": True,
        }
    if all(isinstance(s, str) for s in spec):
        return {"selected": {a: _lookup(groups, a) for a in spec}, "group": False}
    raise TypeError(f"cannot mix grouped and flat selections: {spec!r}")


def _keep(groups: dict, spec) -> dict:
    out = {}
    for item in spec:
        if isinstance(item, tuple):
            name, group_name = item
        else:
            name, group_name = item, _group_of(groups, item)
        out[name] = {"value": _lookup(groups, name), "sanitization": "keep", "group_name": group_name}
    return out


def _items(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, dict):
        return [str(v) for v in value.values()]
    return [str(value)]


def _selected_items(col: dict):
    sel = col["selected"]
    if isinstance(sel, list):
        for g in sel:
            yield from g["attrs"].items()
    elif isinstance(sel, dict):
        yield from sel.items()


ROWS: list[dict] = []


def record(*, id, category, record_type, original, edits, base, smoothed, groups, drop, abstract,
           keep, as_json=()):
    original = original.strip("\n")
    sanitized = original
    for old, new in edits:
        if old not in sanitized:
            raise ValueError(f"{id}: edit does not apply: {old!r}")
        sanitized = sanitized.replace(old, new)
    columns = {
        "attributes_to_drop": _selection(groups, drop),
        "attributes_to_abstract": _selection(groups, abstract),
        "attributes_to_keep": _keep(groups, keep),
        "grouped_annotated_attributes": groups,
    }
    _check(id, original, sanitized, columns)
    row = {
        "id": id,
        "record_type": record_type,
        "original_record": original,
        "sanitized_record": sanitized,
        "base_instruction": base.strip("\n"),
        "smoothed_instruction": " ".join(smoothed.split()),
    }
    for name in ATTR_COLUMNS:
        value = columns[name]
        row[name] = json.dumps(value, ensure_ascii=False) if name in as_json else value
    row["category"] = category
    ROWS.append(row)


def _check(id, original, sanitized, columns):
    problems = []
    for group_name, attrs in columns["grouped_annotated_attributes"].items():
        for name, value in attrs.items():
            for item in _items(value):
                if item not in original:
                    problems.append(f"{group_name}.{name}: {item!r} not in original")
    low = sanitized.lower()
    for col in ("attributes_to_drop", "attributes_to_abstract"):
        for name, value in _selected_items(columns[col]):
            for item in _items(value):
                if item.lower() in low:
                    problems.append(f"{col}.{name}: {item!r} still in sanitized")
    for name, entry in columns["attributes_to_keep"].items():
        for item in _items(entry["value"]):
            if item.lower() not in low:
                problems.append(f"keep.{name}: {item!r} missing from sanitized")
    words = len(original.split())
    if not 120 <= words <= 700:
        problems.append(f"original has {words} words")
    if problems:
        raise ValueError(f"{id}:\n  " + "\n  ".join(problems))


# ---------------------------------------------------------------------------------------------
# Health & Wellness
# ---------------------------------------------------------------------------------------------

record(
    id="sample-med-01",
    category="Health & Wellness",
    record_type="Endocrinology follow-up clinic note (SOAP format) from Riverside Diabetes Centre",
    original="""
RIVERSIDE DIABETES CENTRE — ENDOCRINOLOGY FOLLOW-UP NOTE

Patient: Tobias Ferreira-Lund    DOB: 1961-09-23    MRN: RDC-448201
Date of visit: 18 March 2024    Clinician: Dr. Priya Raman
Referring GP: Dr. Alan Whitmore, Eastgate Family Practice

SUBJECTIVE
Mr. Ferreira-Lund returns for review of type 2 diabetes diagnosed in 2016. He reports better adherence since switching to a weekly pill organiser and now walks his dog for about 40 minutes most evenings. He denies hypoglycaemic episodes, chest pain or visual changes. Mild tingling in both feet persists, worse at night. He works rotating shifts as a tram driver and admits that meals on late shifts are still irregular.

Current medications: metformin 1000 mg twice daily; empagliflozin 10 mg once daily; atorvastatin 20 mg at night.

OBJECTIVE
BP 134/82, pulse 76, weight 91.4 kg (down 3.2 kg since November). Monofilament sensation reduced at both great toes; skin otherwise intact, no ulceration.
HbA1c today: 7.1% (previous 8.4% in November). eGFR 78. LDL 2.1 mmol/L.

ASSESSMENT
Type 2 diabetes with improving glycaemic control. Early peripheral neuropathy, stable.

PLAN
1. Continue current regimen; no dose changes today.
2. Podiatry referral for annual foot screening.
3. Dietitian session on meal planning around shift work.
4. Repeat HbA1c and renal profile in 3 months.

Dr. Priya Raman, Consultant Endocrinologist
Riverside Diabetes Centre, 2 Wharf Lane — clinic line 020 7946 0555
""",
    edits=[
        ("Patient: Tobias Ferreira-Lund    DOB: 1961-09-23    MRN: RDC-448201",
         "Patient: [name removed]    DOB: [removed]    MRN: [removed]"),
        ("Date of visit: 18 March 2024", "Date of visit: March 2024"),
        ("Mr. Ferreira-Lund returns", "The patient returns"),
        ("He works rotating shifts as a tram driver and admits",
         "He works rotating shifts in public transport and admits"),
        ("Current medications: metformin 1000 mg twice daily; empagliflozin 10 mg once daily; "
         "atorvastatin 20 mg at night.",
         "Current medications: established oral glucose-lowering and lipid-lowering regimen "
         "(details withheld)."),
    ],
    base="""
- Remove the patient's full name 'Tobias Ferreira-Lund', date of birth and medical record number from the note.
- Remove the list of current medications and their doses.
- Generalize the visit date '18 March 2024' to the month and year.
- Generalize the patient's occupation 'tram driver' to a broad job sector.
""",
    smoothed="""
Please strip out Tobias's identity details (name, date of birth, MRN) and his medication list, and
make the visit date and his job vaguer, but leave the HbA1c result, the clinician's name and the
3-month follow-up plan exactly as they are.
""",
    groups={
        "Patient Identity": {
            "patient_full_name": "Tobias Ferreira-Lund",
            "date_of_birth": "1961-09-23",
            "medical_record_number": "RDC-448201",
        },
        "Medication Regimen": {
            "current_medications": [
                "metformin 1000 mg twice daily",
                "empagliflozin 10 mg once daily",
                "atorvastatin 20 mg at night",
            ],
        },
        "Visit Details": {
            "visit_date": "18 March 2024",
            "clinician_name": "Dr. Priya Raman",
            "follow_up_interval": "in 3 months",
        },
        "Occupation": {"occupation": "tram driver"},
        "Clinical Results": {"hba1c_result": "7.1%"},
    },
    drop=[
        G("Patient Identity", "patient_full_name", "date_of_birth", "medical_record_number"),
        G("Medication Regimen", "current_medications"),
    ],
    abstract=["visit_date", "occupation"],
    keep=["hba1c_result", "clinician_name", "follow_up_interval"],
)

record(
    id="sample-med-02",
    category="Health & Wellness",
    record_type="Physiotherapy discharge summary e-mailed to a patient after ACL rehabilitation",
    original="""
From: Kinetika Physiotherapy <reception@kinetika-physio.example.org>
To: Agnieszka Wróbel <a.wrobel.runs@example.com>
Date: 22 February 2024, 16:05
Subject: Your discharge summary – ACL rehabilitation programme

Dear Agnieszka,

Congratulations on completing your rehabilitation block with us! As promised, here is a written summary for your records and for your orthopaedic follow-up.

Background: you were referred to Kinetika Physiotherapy after an anterior cruciate ligament reconstruction (hamstring graft) on your left knee, performed by Dr. Marek Zieliński at Szpital Św. Łukasza on 7 November 2023. The injury happened during a five-a-side football match in September.

Progress: over 18 sessions between 20 November and 20 February you progressed from crutch walking to light jogging. Knee flexion improved from 85° to 135°, and your single-leg hop test is now at 88% of the uninjured side. Quadriceps strength is the remaining gap.

Discharge status: independent with home exercise programme; cleared for straight-line running, no pivoting sports until the 9-month review.

Please keep doing the strengthening routine three times a week. If you notice swelling, locking or the knee giving way, ring us on +48 555 310 220 and we will fit you in quickly. Your own number on file is +48 555 203 114 – let us know if it changes.

Warm regards,
Kasia Nowicka, MSc PT
Kinetika Physiotherapy, ul. Długa 14, 31-147 Kraków
""",
    edits=[
        ("To: Agnieszka Wróbel <a.wrobel.runs@example.com>", "To: [patient] <[e-mail removed]>"),
        ("Dear Agnieszka,", "Dear patient,"),
        ("performed by Dr. Marek Zieliński at Szpital Św. Łukasza on 7 November 2023",
         "performed by your orthopaedic surgeon at a hospital in Kraków in late 2023"),
        (" Your own number on file is +48 555 203 114 – let us know if it changes.",
         " Please let us know if your own contact number changes."),
    ],
    base="""
- Remove the patient's name 'Agnieszka Wróbel', her first name, e-mail address and phone number from the e-mail.
- Generalize the surgery details: the surgery date, the surgeon's name and the hospital name.
""",
    smoothed="""
Take the patient's name and contact details out of this discharge e-mail and make the surgery date,
surgeon and hospital generic; the clinic name and phone, the 18 completed sessions and the discharge
status should stay.
""",
    groups={
        "Patient Identity & Contact": {
            "patient_full_name": "Agnieszka Wróbel",
            "patient_first_name": "Agnieszka",
            "patient_email": "a.wrobel.runs@example.com",
            "patient_phone": "+48 555 203 114",
        },
        "Surgery Details": {
            "surgery_date": "7 November 2023",
            "surgeon_name": "Dr. Marek Zieliński",
            "surgery_hospital": "Szpital Św. Łukasza",
        },
        "Rehabilitation Outcome": {
            "clinic_name": "Kinetika Physiotherapy",
            "clinic_phone": "+48 555 310 220",
            "sessions_completed": 18,
            "discharge_status": "independent with home exercise programme",
        },
    },
    drop=["patient_full_name", "patient_first_name", "patient_email", "patient_phone"],
    abstract=[G("Surgery Details", "surgery_date", "surgeon_name", "surgery_hospital")],
    keep=["clinic_name", "clinic_phone", "sessions_completed", "discharge_status"],
    as_json=("attributes_to_drop", "attributes_to_keep"),
)

record(
    id="sample-med-03",
    category="Health & Wellness",
    record_type="Psychotherapy intake assessment notes from a private counselling practice",
    original="""
CONFIDENTIAL — INTAKE ASSESSMENT
Solberg Counselling Practice, Westersingel 88, Rotterdam

Client: Desmond Achterberg (client no. SCP-2291)
Date of session: 5 April 2024, 10:00–10:50
Therapist: Ingrid Solberg, registered psychologist
Referral: self-referred via practice website

Presenting concerns
Client is a 34-year-old man who describes sudden episodes of racing heart, tight chest and a sense that he is "about to pass out", occurring two to three times a week for roughly four months. The first episode happened in the loading yard at Lindqvist Logistics, where he works as a night dispatcher. He has since visited the emergency department twice; the cardiac work-up was normal. He now avoids the motorway and has started taking the train to work, adding an hour to his commute.

History
He lives with his partner, Ruben, in Kralingen. Father had a history of alcohol dependence; client drinks "maybe six beers at the weekend" and denies drug use. No previous psychiatric treatment. Sleep is broken, around five hours a night. No suicidal ideation, no history of self-harm.

Mental status examination
Casually dressed, punctual, good eye contact. Speech normal in rate and volume. Mood described as "on edge all the time"; affect anxious but reactive, and he laughed appropriately when describing his cat. Thought form logical; content preoccupied with fear of collapsing in public and with whether the doctors "missed something". No perceptual disturbance. Insight good, judgement intact.

Measures
GAD-7: 14 (moderate). PHQ-9: 8 (mild), driven mainly by sleep and concentration items. Panic Disorder Severity Scale: 15.

Formulation
Presentation is consistent with panic disorder with emerging agoraphobic avoidance, maintained by catastrophic interpretation of bodily sensations and by safety behaviours (avoiding driving, always carrying a water bottle and his phone).

Plan
Offer cognitive behavioural therapy, weekly 50-minute sessions, initially 12 sessions. Psychoeducation on the panic cycle, with interoceptive exposure from session 3. Client agreed to keep a panic diary. Shared goals: (1) drive the motorway route to work at least twice a week by the end of treatment; (2) reduce panic episodes to fewer than one a week; (3) stop carrying the water bottle "just in case". GP to be informed of the assessment with the client's consent, which he gave verbally. Next appointment booked for 12 April 2024.

I. Solberg
""",
    edits=[
        ("Client: Desmond Achterberg (client no. SCP-2291)", "Client: [withheld]"),
        ("Client is a 34-year-old man", "Client is a man in his thirties"),
        ("in the loading yard at Lindqvist Logistics, where he works as a night dispatcher",
         "at his workplace, a logistics company where he works night shifts"),
        ('He lives with his partner, Ruben, in Kralingen. Father had a history of alcohol dependence; '
         'client drinks "maybe six beers at the weekend" and denies drug use.',
         "He lives with his partner in the city. Family history and alcohol use were discussed and "
         "are recorded in the restricted section of the file; he denies drug use."),
    ],
    base="""
- Remove the client's name 'Desmond Achterberg', client number, partner's name and neighbourhood.
- Remove the family history of alcohol dependence and the client's reported alcohol consumption.
- Generalize the client's employer 'Lindqvist Logistics' to the type of company.
- Generalize the client's age '34-year-old' to an age range.
""",
    smoothed="""
I need to share these intake notes for supervision: take out who the client is (name, number,
partner, neighbourhood) and the family and drinking history, and make his employer and age vague.
Keep the working diagnosis, the CBT plan with weekly 50-minute sessions, the therapist's name and
the next appointment date.
""",
    groups={
        "Client Identity": {
            "client_full_name": "Desmond Achterberg",
            "client_number": "SCP-2291",
            "partner_name": "Ruben",
            "client_neighbourhood": "Kralingen",
        },
        "Family & Substance History": {
            "family_history": "Father had a history of alcohol dependence",
            "alcohol_use": "maybe six beers at the weekend",
        },
        "Client Demographics & Work": {
            "client_age": "34-year-old",
            "employer": "Lindqvist Logistics",
        },
        "Clinical Plan": {
            "working_diagnosis": "panic disorder",
            "therapy_modality": "cognitive behavioural therapy",
            "session_plan": "weekly 50-minute sessions",
            "next_appointment": "12 April 2024",
            "therapist_name": "Ingrid Solberg",
        },
    },
    drop=[
        G("Client Identity", "client_full_name", "client_number", "partner_name", "client_neighbourhood"),
        G("Family & Substance History", "family_history", "alcohol_use"),
    ],
    abstract=["employer", "client_age"],
    keep=["working_diagnosis", "therapy_modality", "session_plan", "next_appointment", "therapist_name"],
)

record(
    id="sample-med-04",
    category="Health & Wellness",
    record_type="Hospital radiology appointment letter for an MRI scan",
    original="""
Queensbridge University Hospitals
Radiology Department, Level 2, East Wing
Hollins Road, Manchester M14 9QS
Appointments: 0161 555 0199

Hospital number: QH 448 902 117
Date of appointment: 12/03/2024
Time: 08:15

Private and confidential
Mr Rafael Quintero-Solís
27 Ashgrove Close
Didsbury, Manchester M20 6RL

Dear Mr Quintero-Solís,

Your doctor has requested an MRI scan of your lumbar spine. We have booked this for Tuesday, March 12, 2024 at 08:15 in the Radiology Department, Level 2, East Wing. Please arrive 20 minutes early to complete a safety questionnaire.

Preparing for your scan
Please have no food for 6 hours before your appointment; you may drink water. Remove all jewellery and leave valuables at home. If you have a pacemaker, a cochlear implant or any metal fragments in your body, or if you could be pregnant, call us before attending.

The scan takes about 30–40 minutes. The machine is noisy and you will be offered headphones. A relative or friend may wait in the reception area but cannot enter the scanning room.

If you cannot attend, please call 0161 555 0199 at least 48 hours beforehand so that the slot can be offered to another patient. Patients who miss two appointments without notice may be referred back to their GP.

Yours sincerely,
Appointments Team, Radiology
""",
    edits=[
        ("Hospital number: QH 448 902 117\nDate of appointment: 12/03/2024\nTime: 08:15",
         "Hospital number: [removed]\nDate of appointment: March 2024\nTime: morning"),
        ("Mr Rafael Quintero-Solís\n27 Ashgrove Close\nDidsbury, Manchester M20 6RL",
         "[Patient name and address removed]"),
        ("Dear Mr Quintero-Solís,", "Dear Patient,"),
        ("Tuesday, March 12, 2024 at 08:15", "a weekday morning in March 2024"),
    ],
    base="""
- Remove the patient's name 'Rafael Quintero-Solís', hospital number and home address from the letter.
- Remove the appointment date '12/03/2024' from the letter header.
- Generalize the appointment date 'March 12, 2024' and time '08:15' to the month and part of the day.
- Keep the department location, the appointments phone number and the fasting instruction.
""",
    smoothed="""
Can you anonymise this hospital letter? Drop my name, hospital number and address, and just say the
scan is on a morning in March 2024 instead of the exact date and time — but leave the department
location, the appointments number and the fasting instruction as written.
""",
    groups={
        "Patient Identity": {
            "patient_name": "Rafael Quintero-Solís",
            "hospital_number": "QH 448 902 117",
            "home_address": "27 Ashgrove Close",
            "home_postcode": "M20 6RL",
        },
        "Appointment (letter header)": {"appointment_date": "12/03/2024", "appointment_time": "08:15"},
        "Appointment (letter body)": {"appointment_date": "March 12, 2024", "appointment_time": "08:15"},
        "Department & Preparation": {
            "department_location": "Radiology Department, Level 2, East Wing",
            "appointments_phone": "0161 555 0199",
            "fasting_instruction": "no food for 6 hours",
        },
    },
    # appointment_date is selected twice with different values: the abstract entry wins.
    drop={"selected": {"patient_name": "Rafael Quintero-Solís",
                       "hospital_number": "QH 448 902 117",
                       "home_address": "27 Ashgrove Close",
                       "home_postcode": "M20 6RL",
                       "appointment_date": "12/03/2024"},
          "group": False},
    abstract={"selected": {"appointment_date": "March 12, 2024", "appointment_time": "08:15"},
              "group": False},
    keep=["department_location", "appointments_phone", "fasting_instruction"],
)

# ---------------------------------------------------------------------------------------------
# Legal & Compliance
# ---------------------------------------------------------------------------------------------

record(
    id="sample-legal-01",
    category="Legal & Compliance",
    record_type="Notice of hearing from a county small claims court",
    original="""
SUPERIOR COURT OF HARLAN COUNTY — SMALL CLAIMS DIVISION
417 Courthouse Square, Bellmont, OR 97035 · Clerk: (503) 555-0142

NOTICE OF HEARING

Case No.: SC-2024-001873
Plaintiff: Marguerite Delacroix-Hale, 1129 Juniper Crest Drive, Bellmont, OR 97034, tel. (503) 555-0187
Defendant: Brightline Auto Repair LLC, 88 Industrial Way, Bellmont, OR 97035

TO ALL PARTIES:
You are notified that the claim filed on April 2, 2024, in the amount of $3,460.00 for allegedly defective transmission repair work will be heard on June 4, 2024, at 9:30 a.m. in Courtroom 3B before the Honorable Teresa Okoye-Lindgren.

Each party must bring all documents, photographs, receipts and witnesses needed to support their case. The court will not postpone the hearing except for good cause shown in writing at least five court days before the hearing date. If the defendant fails to appear, judgment may be entered in favor of the plaintiff. If the plaintiff fails to appear, the claim may be dismissed.

Parties who need an interpreter or a disability accommodation should contact the clerk's office no later than May 24, 2024.

Dated: April 15, 2024
By: R. Castellano, Deputy Clerk
""",
    edits=[
        ("Plaintiff: Marguerite Delacroix-Hale, 1129 Juniper Crest Drive, Bellmont, OR 97034, "
         "tel. (503) 555-0187",
         "Plaintiff: [name, address and telephone withheld]"),
    ],
    base="""
- Remove the plaintiff's name 'Marguerite Delacroix-Hale', home address and telephone number from the notice.
""",
    smoothed="""
Before I post this court notice to the neighbourhood forum, please remove the plaintiff's name,
address and phone number; everything else — case number, defendant, claim amount, hearing date and
courtroom — should stay exactly as it is.
""",
    groups={
        "Plaintiff Identity & Contact": {
            "plaintiff_name": "Marguerite Delacroix-Hale",
            "plaintiff_address": "1129 Juniper Crest Drive, Bellmont, OR 97034",
            "plaintiff_phone": "(503) 555-0187",
        },
        "Case & Hearing Details": {
            "case_number": "SC-2024-001873",
            "defendant_name": "Brightline Auto Repair LLC",
            "claim_amount": "$3,460.00",
            "hearing_date": "June 4, 2024",
            "courtroom": "Courtroom 3B",
        },
    },
    drop=[G("Plaintiff Identity & Contact", "plaintiff_name", "plaintiff_address", "plaintiff_phone")],
    abstract=None,
    keep=["case_number", "defendant_name", "claim_amount", "hearing_date", "courtroom"],
)

record(
    id="sample-legal-02",
    category="Legal & Compliance",
    record_type="Police incident report narrative for a retail theft",
    original="""
METRO CITY POLICE DEPARTMENT — INCIDENT REPORT (NARRATIVE)
Incident No.: 24-011582          Reporting Officer: Ofc. J. Vandermeer, Badge 4471
Date/Time Reported: 03/09/2024 17:42
Offense: Theft under $500 (retail)
Location: QuickStop Market, 2250 Alder Avenue

On the above date and time I was dispatched to QuickStop Market, 2250 Alder Avenue, regarding a shoplifting suspect being held by store staff. On arrival I met the store manager, Lucía Benavente, who stated that she had observed a male conceal two packs of razor blades and a phone charger (total retail value $67.48) in his jacket and walk past the registers without paying. She stopped him at the exit and asked him to wait in the office, which he did without resistance.

I made contact with the suspect, identified by his state ID card as Kwame Asante-Boateng, DOB 11/27/2004, ID no. D4482-1170-93, of 14 Pell Street, Apt 2. Asante-Boateng admitted taking the items and said he "needed the charger for a job interview tomorrow." He was cooperative throughout. A records check showed no prior arrests and no outstanding warrants.

Store CCTV (camera 3, aisle 6) was reviewed on scene and is consistent with the manager's account; a copy was requested from the loss-prevention office. The recovered items were photographed and returned to the store.

Property / evidence
1. Two packs of razor blades, retail $18.99 each — photographed, returned to the store.
2. One USB-C phone charger, retail $29.50 — photographed, returned to the store.
3. CCTV export request form LP-7731, to be collected by the evidence unit.

Witness statement summary
The manager provided a written statement on the department form. She stated that she had watched the suspect for about four minutes on the aisle monitor, that he did not attempt to hide his face, and that he apologised when stopped. A cashier on duty did not see the concealment and did not give a statement.

Because the suspect is a first-time offender and the value is below the diversion threshold, he was issued citation C-558203 and referred to the County Youth & Young Adult Diversion Program. He was released on scene at 18:35. The manager indicated that the store wishes to prosecute only if diversion is not completed.

Ofc. J. Vandermeer #4471
""",
    edits=[
        ("QuickStop Market, 2250 Alder Avenue", "a convenience store on the east side"),
        ("the store manager, Lucía Benavente, who", "the store manager, who"),
        ("identified by his state ID card as Kwame Asante-Boateng, DOB 11/27/2004, ID no. D4482-1170-93, "
         "of 14 Pell Street, Apt 2.",
         "identified by his state ID card (identity details on file, withheld here)."),
        ('Asante-Boateng admitted taking the items and said he "needed the charger for a job interview '
         'tomorrow."',
         "The suspect admitted taking the items and gave a personal reason for needing the charger."),
    ],
    base="""
- Remove the suspect's name 'Kwame Asante-Boateng', date of birth, ID number and home address from the report.
- Remove the name of the store manager who witnessed the theft.
- Generalize the incident location 'QuickStop Market, 2250 Alder Avenue' to a type of place and area.
- Generalize the suspect's quoted reason for taking the charger.
""",
    smoothed="""
For the diversion-program training packet, please anonymise this report: no suspect identity details
or witness name, a vague location instead of the store address, and just a general mention of why he
took the charger. The incident number, the offense, the officer's badge number, the citation number
and the diversion program name must stay.
""",
    groups={
        "Suspect Identity": {
            "suspect_name": "Kwame Asante-Boateng",
            "suspect_dob": "11/27/2004",
            "suspect_id_number": "D4482-1170-93",
            "suspect_address": "14 Pell Street, Apt 2",
        },
        "Witness Identity": {"witness_name": "Lucía Benavente"},
        "Incident Circumstances": {
            "incident_location": "QuickStop Market, 2250 Alder Avenue",
            "suspect_stated_reason": "needed the charger for a job interview tomorrow",
        },
        "Case Administration": {
            "incident_number": "24-011582",
            "offense": "Theft under $500",
            "officer_badge": "4471",
            "citation_number": "C-558203",
            "diversion_program": "County Youth & Young Adult Diversion Program",
        },
    },
    drop=[
        G("Suspect Identity", "suspect_name", "suspect_dob", "suspect_id_number", "suspect_address"),
        G("Witness Identity", "witness_name"),
    ],
    abstract=["incident_location", "suspect_stated_reason"],
    keep=["incident_number", "offense", "officer_badge", "citation_number", "diversion_program"],
)

record(
    id="sample-legal-03",
    category="Legal & Compliance",
    record_type="Engagement letter from a family-law firm for a dissolution of marriage",
    original="""
HARTWELL & OSEI FAMILY LAW, LLP
600 SW Morrison Street, Suite 1210, Portland, OR 97205
(971) 555-0160 · intake@hartwell-osei.example.com

May 6, 2024

PERSONAL AND CONFIDENTIAL
Mr. Yusuf Karaca
yusuf.karaca@example.net

Re: Engagement for dissolution of marriage — Karaca v. Karaca

Dear Mr. Karaca,

Thank you for meeting with me on May 2. This letter confirms that Hartwell & Osei Family Law, LLP will represent you in the dissolution of your marriage to Elif Karaca, whom you married on 14 September 2012 in İzmir. You told us that you separated in January 2024 and that you wish to pursue shared custody of your children, Deniz (age 9) and Aylin (age 6).

Scope. We will prepare and file the petition, negotiate a parenting plan and property division, and represent you at mediation and, if needed, at trial. Appeals and enforcement actions are outside this engagement.

Fees. Our hourly rate for partner time is $325 per hour; associates bill at $210 per hour and paralegals at $120 per hour. We require an initial retainer of $4,500, deposited into our client trust account and applied to invoices as they are issued. Unused funds will be refunded at the end of the matter.

Your responsibilities. Please provide complete financial disclosures, including your 2022 and 2023 tax returns and statements for the joint account ending 3391, within 21 days.

Please sign and return this letter with the retainer. We look forward to working with you.

Sincerely,
Naomi Osei, Partner
""",
    edits=[
        ("Mr. Yusuf Karaca\nyusuf.karaca@example.net", "[Client name and e-mail withheld]"),
        ("Karaca v. Karaca", "In re Marriage of [withheld]"),
        ("Dear Mr. Karaca,", "Dear Client,"),
        ("your marriage to Elif Karaca, whom you married on 14 September 2012 in İzmir.",
         "your marriage to your spouse, whom you married in 2012 in Türkiye."),
        ("you separated in January 2024", "you separated earlier this year"),
        ("your children, Deniz (age 9) and Aylin (age 6).", "your two minor children."),
        ("the joint account ending 3391", "your joint bank account"),
    ],
    base="""
- Remove the client's name 'Yusuf Karaca', e-mail address and the joint account number from the letter.
- Remove the spouse's name and the children's names.
- Generalize the marriage date '14 September 2012' to the year and the place of marriage 'İzmir' to the country.
- Generalize the separation date 'January 2024'.
""",
    smoothed="""
Please redact this engagement letter so I can show it to my mediator's assistant: no names for me,
my spouse or the kids, no e-mail or account number, and only the year and country of the marriage and
a vague separation date. Keep the firm name, the $325 per hour partner rate, the $4,500 retainer and
the 21-day deadline.
""",
    groups={
        "Client Identity & Contact": {
            "client_name": "Yusuf Karaca",
            "client_email": "yusuf.karaca@example.net",
            "joint_account_last4": "3391",
        },
        "Spouse & Children": {
            "spouse_name": "Elif Karaca",
            "children_names": ["Deniz", "Aylin"],
        },
        "Marriage Timeline": {
            "marriage_date": "14 September 2012",
            "marriage_place": "İzmir",
            "separation_date": "January 2024",
        },
        "Engagement Terms": {
            "firm_name": "Hartwell & Osei Family Law, LLP",
            "partner_hourly_rate": "$325 per hour",
            "retainer_amount": "$4,500",
            "document_deadline": "within 21 days",
        },
    },
    drop=[
        G("Client Identity & Contact", "client_name", "client_email", "joint_account_last4"),
        G("Spouse & Children", "spouse_name", "children_names"),
    ],
    abstract=["marriage_date", "marriage_place", "separation_date"],
    keep=["firm_name", "partner_hourly_rate", "retainer_amount", "document_deadline"],
    as_json=ALL_JSON,
)

record(
    id="sample-legal-04",
    category="Legal & Compliance",
    record_type="Personal-injury settlement demand letter from a law firm to a homeowner's insurer",
    original="""
OKONJO-REYES INJURY LAW
2100 Larimer Street, Suite 400 · Denver, CO 80205 · (303) 555-0108

November 18, 2024

VIA EMAIL (claims.intake@summitmutual.example.com) AND CERTIFIED MAIL

Summit Mutual Insurance Company
Attn: Daniel Fairchild, Senior Claims Adjuster
Claim No.: HO-24-5581-2207
Your insured: Trevor and Alyssa Lindgren-Marsh
Date of loss: August 3, 2024

Re: Settlement demand — dog bite injury to our client, Hyun-woo Baek

Dear Mr. Fairchild:

This firm represents Hyun-woo Baek in connection with injuries he suffered on August 3, 2024, when he was attacked by a dog owned by your insureds at their home, 4418 Cherrywood Lane, Aurora, Colorado. Please direct all further communication about this claim to our office.

Facts. Mr. Baek, a 52-year-old letter carrier, was delivering mail to the Cherrywood Lane address at approximately 11:20 a.m. The insureds' two-year-old Cane Corso ran through an open side gate and bit him on the right forearm and left thigh. A neighbor, Carol Dunphy, pulled the dog away and called 911. Aurora Animal Services cited the insureds for an animal at large (citation AS-24-01977) and noted a previous warning issued in March 2024 for the same dog.

Injuries and treatment. Mr. Baek was transported to Mountain View Medical Center, where the forearm wound required surgical debridement and 22 sutures. He developed a wound infection that required a second course of intravenous antibiotics and four days of inpatient care from August 9 to August 13. He attended 14 sessions of occupational therapy for reduced grip strength and has been diagnosed by his treating psychologist with post-traumatic stress symptoms, including nightmares and fear of approaching houses with dogs.

Damages.
Medical expenses to date: $48,716.30
Lost wages (August 3 – October 14, 2024): $11,240.00
Estimated future medical care (scar revision, counseling): $9,500.00
Non-economic damages (pain, suffering, scarring, emotional distress): $105,000.00
Total demand: $174,456.30

Mr. Baek returned to light duty on October 15 but remains restricted from carrying more than 20 pounds with his right arm. Photographs of the wounds, itemized bills and the animal services report are enclosed.

Liability is clear under the state dog-bite statute, which imposes strict liability for serious bodily injury caused by a dog while the victim was lawfully on the property performing a public duty. We understand that the insureds' policy carries liability limits of $300,000.

Demand. We will accept $174,456.30 in full settlement of all claims against your insureds. This offer remains open until 5:00 p.m. Mountain Time on December 20, 2024. If we do not receive a written response by then, we are prepared to file suit in Arapahoe County District Court without further notice.

Very truly yours,
Gabriela Okonjo-Reyes, Esq.
""",
    edits=[
        ("Your insured: Trevor and Alyssa Lindgren-Marsh", "Your insured: [withheld]"),
        ("dog bite injury to our client, Hyun-woo Baek", "dog bite injury to our client"),
        ("This firm represents Hyun-woo Baek in connection", "This firm represents our client in connection"),
        ("at their home, 4418 Cherrywood Lane, Aurora, Colorado.", "at their home in Aurora, Colorado."),
        ("Mr. Baek, a 52-year-old letter carrier, was delivering mail to the Cherrywood Lane address at "
         "approximately",
         "Our client, a public employee, was on duty at the insureds' address at approximately"),
        ("A neighbor, Carol Dunphy, pulled", "A neighbor pulled"),
        ("Mr. Baek was transported to Mountain View Medical Center, where",
         "Our client was transported to a local hospital, where"),
        ("He developed a wound infection that required a second course of intravenous antibiotics and "
         "four days of inpatient care from August 9 to August 13.",
         "He developed a complication that required further treatment, including a readmission."),
        ("and has been diagnosed by his treating psychologist with post-traumatic stress symptoms, "
         "including nightmares and fear of approaching houses with dogs.",
         "and continues to receive psychological care related to the attack."),
        ("Mr. Baek returned to light duty", "Our client returned to light duty"),
    ],
    base="""
- Remove the client's name 'Hyun-woo Baek' and age from the letter.
- Remove the client's psychological diagnosis and the details of his inpatient readmission.
- Remove the names and home address of the insureds and the name of the neighbor who intervened.
- Generalize the client's occupation 'letter carrier' and the hospital name 'Mountain View Medical Center'.
""",
    smoothed="""
I'm sending this demand letter to a colleague for feedback, so please anonymise it: no names or ages
for our client, the insureds or the neighbor, no home address, no psychological diagnosis or
readmission details, and only a general description of his job and the hospital. The claim number,
date of loss, animal-services citation, the $174,456.30 total and the December 20 deadline must stay.
""",
    groups={
        "Client Identity": {
            "client_name": "Hyun-woo Baek",
            "client_age": "52-year-old",
            "client_occupation": "letter carrier",
        },
        "Client Health Information": {
            "psychological_diagnosis": "post-traumatic stress symptoms",
            "readmission_details": "four days of inpatient care from August 9 to August 13",
            "treating_hospital": "Mountain View Medical Center",
        },
        "Insured Parties & Witness": {
            "insured_names": "Trevor and Alyssa Lindgren-Marsh",
            "insured_address": "4418 Cherrywood Lane",
            "witness_name": "Carol Dunphy",
        },
        "Claim & Demand": {
            "claim_number": "HO-24-5581-2207",
            "date_of_loss": "August 3, 2024",
            "citation_number": "AS-24-01977",
            "total_demand": "$174,456.30",
            "response_deadline": "December 20, 2024",
        },
    },
    drop=[
        G("Client Identity", "client_name", "client_age"),
        G("Client Health Information", "psychological_diagnosis", "readmission_details"),
        G("Insured Parties & Witness", "insured_names", "insured_address", "witness_name"),
    ],
    abstract=["client_occupation", "treating_hospital"],
    keep=["claim_number", "date_of_loss", "citation_number", "total_demand", "response_deadline"],
)

# ---------------------------------------------------------------------------------------------
# Business & Finance (financial records)
# ---------------------------------------------------------------------------------------------

record(
    id="sample-fin-01",
    category="Business & Finance",
    record_type="Tenant ledger statement of account from a property management company",
    original="""
CEDAR HOLLOW PROPERTY GROUP
Tenant Ledger — Statement of Account
Printed 07/02/2024 09:14 by m.halloran

Tenant: Okechukwu Brandt-Nwosu
Unit: 4B, 2717 Larkspur Avenue, Denver, CO 80205
Phone: (720) 555-0134 | Email: okey.brandtnwosu@example.com
Lease term: 08/01/2023 – 07/31/2024
Monthly rent: 1850.00 | Pet rent: 35.00 | Security deposit held: 1850.00

Date        Description                     Charges   Payments   Balance
03/01/2024  Rent – March                    1850.00              1850.00
03/01/2024  Pet rent – March                  35.00              1885.00
03/04/2024  ACH payment ref 88213                       1885.00     0.00
04/01/2024  Rent – April                    1850.00              1850.00
04/01/2024  Pet rent – April                  35.00              1885.00
04/08/2024  Late fee (received after 5th)     75.00              1960.00
04/08/2024  Card payment ref 90457                      1960.00     0.00
05/01/2024  Rent – May                      1850.00              1850.00
05/01/2024  Pet rent – May                    35.00              1885.00
05/03/2024  ACH payment ref 91170                       1885.00     0.00
06/01/2024  Rent – June                     1850.00              1850.00
06/01/2024  Pet rent – June                   35.00              1885.00
06/04/2024  ACH payment ref 92388                       1885.00     0.00

Current balance due: 0.00

Notes
A late fee of $75 applies when rent is received after the 5th of the month. Tenant gave written notice on 06/12/2024 that he will not renew; the move-out inspection is scheduled for 07/31/2024 at 10:00. The deposit refund, less any deductions, will be mailed within 30 days of move-out to the forwarding address on file.
Questions: accounts@cedarhollow.example.com or (720) 555-0190, Mon–Fri 9–5.
""",
    edits=[
        ("Tenant: Okechukwu Brandt-Nwosu\nUnit: 4B, 2717 Larkspur Avenue, Denver, CO 80205\n"
         "Phone: (720) 555-0134 | Email: okey.brandtnwosu@example.com",
         "Tenant: [withheld]\nUnit: [withheld]\nPhone: [withheld] | Email: [withheld]"),
        ("Monthly rent: 1850.00 | Pet rent: 35.00 | Security deposit held: 1850.00",
         "Monthly rent: under $2,000 | Pet rent: 35.00 | Security deposit held: one month's rent"),
        ("1850.00", "[rent]  "),
        ("1885.00", "[rent+pet]"),
        ("1960.00", "[rent+pet+fee]"),
    ],
    base="""
- Remove the tenant's name 'Okechukwu Brandt-Nwosu', unit address, phone number and e-mail address.
- Generalize the monthly rent amount '1850' (including where it appears in the ledger) to a range.
""",
    smoothed="""
I'm sharing this ledger as an example for a housing workshop: please remove the tenant's name and
contact details and don't show the exact rent anywhere, just a rough range. The $75 late-fee rule,
the move-out inspection time and the accounts e-mail address should remain.
""",
    groups={
        "Tenant Identity & Contact": {
            "tenant_name": "Okechukwu Brandt-Nwosu",
            "unit_address": "4B, 2717 Larkspur Avenue, Denver, CO 80205",
            "tenant_phone": "(720) 555-0134",
            "tenant_email": "okey.brandtnwosu@example.com",
        },
        "Lease Financials": {
            "monthly_rent": 1850,
            "late_fee": "late fee of $75",
        },
        "Move-out & Contact": {
            "move_out_inspection": "07/31/2024 at 10:00",
            "manager_contact_email": "accounts@cedarhollow.example.com",
        },
    },
    drop=[G("Tenant Identity & Contact", "tenant_name", "unit_address", "tenant_phone", "tenant_email")],
    abstract=["monthly_rent"],
    keep=["late_fee", "move_out_inspection", "manager_contact_email"],
    as_json=ALL_JSON,
)

record(
    id="sample-fin-02",
    category="Business & Finance",
    record_type="Secure chat transcript between a credit union member and a card-fraud support agent",
    original="""
Northfield Federal Credit Union — Secure Chat Transcript
Session ID: CH-20240311-55812 | Channel: Mobile app | Agent: Marcus (ID 3307)

[14:02:11] System: You are now connected with Marcus.
[14:02:25] Marcus: Hi, thanks for contacting Northfield Federal. How can I help today?
[14:02:58] Member: Hi Marcus, I just saw three charges on my Visa that I definitely didn't make. Two from an electronics site and one from a food delivery app in a city I've never been to.
[14:03:20] Marcus: I'm sorry to hear that. For verification, can you confirm your full name and date of birth?
[14:03:41] Member: Priyanka Raghunathan, 02/29/1988.
[14:03:55] Marcus: Thank you, Priyanka. Which card is this? Just the last four digits, please.
[14:04:07] Member: Ending 4417.
[14:04:40] Marcus: I see them: $389.99 and $174.50 at VoltMart Online on 03/10, and $47.91 at DashBite on 03/11. Total $612.40. Is that right?
[14:05:02] Member: Yes, that's all of them. The card has been in my wallet the whole time.
[14:05:30] Marcus: Understood. I've blocked the card ending 4417 and ordered a replacement to your address on file; it should arrive in 5–7 business days. I've opened a dispute for $612.40 under reference DSP-7730-2291.
[14:05:52] Member: Will I have to pay for them in the meantime?
[14:06:15] Marcus: No. You'll receive a provisional credit within 10 business days while our fraud team investigates. We may e-mail you a form to sign.
[14:06:40] Member: Great, thank you so much.
[14:06:48] Marcus: You're welcome, Priyanka. Anything else I can help with?
[14:06:55] Member: No, that's it.
[14:07:02] System: Chat ended.
""",
    edits=[
        ("Priyanka Raghunathan, 02/29/1988.", "[name and date of birth provided and verified]"),
        ("Thank you, Priyanka.", "Thank you."),
        ("You're welcome, Priyanka.", "You're welcome."),
        ("the card ending 4417", "the card"),
        ("Ending 4417.", "[last four digits provided]"),
    ],
    base="""
- Remove the member's full name 'Priyanka Raghunathan' and first name from the transcript.
- Remove the member's date of birth '02/29/1988'.
- Remove the last four digits of the card '4417'.
""",
    smoothed="""
Scrub the customer's name, birth date and card digits from this chat log; the dispute reference, the
$612.40 total and the 10-business-day provisional credit promise need to stay in.
""",
    groups={
        "Member Identity": {
            "customer_full_name": "Priyanka Raghunathan",
            "customer_first_name": "Priyanka",
            "customer_date_of_birth": "02/29/1988",
        },
        "Card Details": {"card_last_four": "4417"},
        "Dispute Details": {
            "dispute_reference": "DSP-7730-2291",
            "disputed_total": "$612.40",
            "provisional_credit_timeline": "within 10 business days",
        },
    },
    drop=["customer_full_name", "customer_first_name", "customer_date_of_birth", "card_last_four"],
    abstract=[],
    keep=["dispute_reference", "disputed_total", "provisional_credit_timeline"],
)

record(
    id="sample-fin-03",
    category="Business & Finance",
    record_type="Small-business working-capital loan approval letter from a Brazilian bank branch",
    original="""
BANCO ATLÂNTICO COMERCIAL S.A.
Agência Paulista · Avenida Paulista, 1578 · São Paulo – SP · 01310-200

São Paulo, 19 March 2024

Ref.: Working-capital credit application no. PJ-2024-118406

Ms. Fernanda Vasconcelos Araújo
Padaria Vasconcelos Ltda. (CNPJ 47.812.339/0001-60)
Rua Cardeal Arcoverde, 902 – Pinheiros

Dear Ms. Araújo,

We are pleased to inform you that the credit committee has approved your working-capital loan application on the following terms:

• Approved amount: R$ 250.000,00
• Term: 36 months, with a 3-month grace period on principal
• Rate: 1,35% per month (fixed)
• Guarantee: fiduciary assignment of card receivables plus the personal guarantee of the managing partner

The committee's analysis considered the bakery's declared annual revenue of R$ 1.240.000,00 for 2023, the payment history of the business account, and your personal credit score at the time of analysis (812 points). We note that the personal guarantee is given by you as majority partner, CPF 381.220.947-15.

To sign the contract, please visit the branch at Avenida Paulista, 1578 by 5 April 2024 with your ID, proof of address and the company's latest articles of association. Your relationship manager, Rodrigo Tavares, can be reached on +55 11 5555-0123.

Kind regards,
Credit Operations – Agência Paulista
""",
    edits=[
        ("Ms. Fernanda Vasconcelos Araújo\nPadaria Vasconcelos Ltda. (CNPJ 47.812.339/0001-60)\n"
         "Rua Cardeal Arcoverde, 902 – Pinheiros",
         "[Borrower name, company name, CNPJ and address withheld]"),
        ("Dear Ms. Araújo,", "Dear Client,"),
        ("declared annual revenue of R$ 1.240.000,00 for 2023",
         "declared annual revenue of somewhat over R$ 1 million for 2023"),
        ("and your personal credit score at the time of analysis (812 points)",
         "and your personal credit profile at the time of analysis"),
        (", CPF 381.220.947-15.", "."),
    ],
    base="""
- Remove the borrower's name 'Fernanda Vasconcelos Araújo', the company name, CNPJ, CPF and business address.
- Remove the borrower's personal credit score.
- Generalize the declared annual revenue 'R$ 1.240.000,00' to an approximate magnitude.
- Keep the branch address, the approved amount, the loan term, the signing deadline and the relationship manager.
""",
    smoothed="""
Please anonymise this loan letter — no name, company, tax numbers, business address or credit score,
and only a rough revenue figure — while keeping the branch address in São Paulo, the R$ 250.000,00
amount, the 36-month term, the 5 April deadline and the relationship manager's name.
""",
    groups={
        "Borrower Identity": {
            "owner_name": "Fernanda Vasconcelos Araújo",
            "business_name": "Padaria Vasconcelos Ltda.",
            "company_tax_id": "47.812.339/0001-60",
            "owner_cpf": "381.220.947-15",
            "business_address": "Rua Cardeal Arcoverde, 902 – Pinheiros",
        },
        "Credit Profile": {
            "personal_credit_score": "812 points",
            "annual_revenue": "R$ 1.240.000,00",
        },
        "Loan Terms & Branch": {
            "approved_amount": "R$ 250.000,00",
            "loan_term": "36 months",
            "contract_deadline": "5 April 2024",
            "relationship_manager": "Rodrigo Tavares",
            "branch_address": {
                "street": "Avenida Paulista, 1578",
                "city": "São Paulo",
                "postal_code": "01310-200",
            },
        },
    },
    drop=[
        G("Borrower Identity", "owner_name", "business_name", "company_tax_id", "owner_cpf",
          "business_address"),
        G("Credit Profile", "personal_credit_score"),
    ],
    abstract=[G("Credit Profile", "annual_revenue")],
    keep=["branch_address", "approved_amount", "loan_term", "contract_deadline", "relationship_manager"],
)

record(
    id="sample-fin-04",
    category="Business & Finance",
    record_type="Monthly checking account statement from a retail bank",
    original="""
HARBOURLINE BANK
Everyday Checking — Monthly Statement
Statement period: April 1 – April 30, 2024                     Page 1 of 1

Ingrid Halvorsen-Moe
58 Kestrel Row, Unit 12
Tacoma, WA 98403

Account number: 0042-7781-3306
Customer service: 1-800-555-0117 (24/7)

SUMMARY
Opening balance (Apr 1)            $2,904.11
Deposits and credits              +$5,612.00
Withdrawals and debits            -$5,297.54
Closing balance (Apr 30)           $3,218.57

TRANSACTIONS
Apr 01  Payroll deposit – Sound Maritime Logistics      +2,806.00
Apr 02  Rent – Kestrel Row Apartments                   -1,640.00
Apr 05  Puget Energy autopay                              -118.42
Apr 09  Northgate Fertility Clinic – copay                -450.00
Apr 11  Safeway #1187                                      -96.37
Apr 15  Payroll deposit – Sound Maritime Logistics      +2,806.00
Apr 16  Transfer to savings ••7702                      -1,000.00
Apr 18  Northgate Fertility Clinic – pharmacy           -1,235.80
Apr 22  Costco Gas                                         -61.15
Apr 24  Zelle to K. Moe                                   -500.00
Apr 26  Verizon Wireless                                   -85.00
Apr 29  Safeway #1187                                     -110.80

NOTICES
Beginning June 1, 2024, the monthly maintenance fee on Everyday Checking will be waived when you receive at least $1,000 in direct deposits per statement period. No action is needed if you already meet this requirement.

To dispute a transaction, call customer service within 60 days of the statement date. Overdraft coverage is currently OFF for debit card purchases on this account.
""",
    edits=[
        ("Ingrid Halvorsen-Moe\n58 Kestrel Row, Unit 12\nTacoma, WA 98403",
         "[Account holder name and address withheld]"),
        ("Account number: 0042-7781-3306", "Account number: [withheld]"),
        ("Payroll deposit – Sound Maritime Logistics", "Payroll deposit – employer"),
        ("Rent – Kestrel Row Apartments", "Rent – landlord"),
        ("Northgate Fertility Clinic", "Medical provider"),
    ],
    base="""
- Remove the account holder's name 'Ingrid Halvorsen-Moe', mailing address and account number.
- Generalize the medical payee 'Northgate Fertility Clinic' to a generic description.
- Generalize the employer name 'Sound Maritime Logistics' in the payroll lines.
""",
    smoothed="""
I want to use this statement as proof of income without exposing myself: remove my name, address and
account number, and replace the fertility clinic and my employer with generic labels. The statement
period and the opening and closing balances have to stay as they are.
""",
    groups={
        "Account Holder Identity": {
            "account_holder_name": "Ingrid Halvorsen-Moe",
            "mailing_address": "58 Kestrel Row, Unit 12",
            "account_number": "0042-7781-3306",
        },
        "Health-Related Transactions": {"medical_payee": "Northgate Fertility Clinic"},
        "Employment": {"employer": "Sound Maritime Logistics"},
        "Statement Summary": {
            "statement_period": "April 1 – April 30, 2024",
            "opening_balance": "$2,904.11",
            "closing_balance": "$3,218.57",
        },
    },
    drop=[G("Account Holder Identity", "account_holder_name", "mailing_address", "account_number")],
    abstract=[G("Health-Related Transactions", "medical_payee"), G("Employment", "employer")],
    keep=["statement_period", "opening_balance", "closing_balance"],
)

# ---------------------------------------------------------------------------------------------
# Employment & HR
# ---------------------------------------------------------------------------------------------

record(
    id="sample-hr-01",
    category="Business & Finance",
    record_type="Performance improvement plan memo from a customer-support manager",
    original="""
INTERNAL MEMORANDUM — CONFIDENTIAL
To: Callum Ó Raghallaigh, Customer Support Specialist II (Employee ID 30-11847)
From: Beatriz Santamaría, Support Operations Manager
Cc: People Team (hr@lumenpath.example.com)
Date: 29 January 2024
Re: Performance Improvement Plan

Callum,

This memo formalises the conversation we had on 25 January. Over the last quarter your resolved-ticket volume has averaged 24 per week against the team target of 38 tickets per week, and your customer satisfaction score fell from 4.6 to 3.9. Two escalations in December (cases #55120 and #55347) were closed without the required follow-up note.

We also discussed that some of the missed shifts in November and December were related to your Crohn's disease flare-ups, and that you have since been granted an intermittent-leave accommodation through the People Team. Absences covered by that accommodation are excluded from this plan and will not be counted against you.

Expectations for the next 60 days:
1. Reach a minimum of 38 tickets per week by week 4 and sustain it.
2. Restore a CSAT average of at least 4.4.
3. Complete the escalation-handling refresher module by 16 February 2024.

We will meet every Friday at 11:00 for a 20-minute check-in. The formal review will take place on 29 March 2024. If the expectations are met, the plan closes; if not, further action up to and including termination may follow.

Please sign below to confirm that you have received this memo. You may attach written comments.

Beatriz Santamaría
""",
    edits=[
        ("To: Callum Ó Raghallaigh, Customer Support Specialist II (Employee ID 30-11847)",
         "To: [Employee], Customer Support Specialist II"),
        ("Callum,\n", "Hello,\n"),
        ("(cases #55120 and #55347)", "(two cases)"),
        ("were related to your Crohn's disease flare-ups, and that you have since been granted an "
         "intermittent-leave accommodation through the People Team.",
         "were related to a health matter, and that an approved accommodation is now in place through "
         "the People Team."),
    ],
    base="""
- Remove the employee's name 'Callum Ó Raghallaigh', first name and employee ID from the memo.
- Remove the employee's medical condition and the type of accommodation granted.
- Generalize the escalation case numbers to a count.
""",
    smoothed="""
We're using this PIP memo as an anonymised template for managers, so take out the employee's name,
ID and the health details, and just say how many escalation cases there were. Keep the 60-day
duration, the 38 tickets per week target, the 29 March review date and the manager's name.
""",
    groups={
        "Employee Identity": {
            "employee_name": "Callum Ó Raghallaigh",
            "employee_first_name": "Callum",
            "employee_id": "30-11847",
        },
        "Health Information": {
            "medical_condition": "Crohn's disease flare-ups",
            "accommodation_type": "intermittent-leave accommodation",
        },
        "Performance Record": {
            "escalation_case_numbers": ["#55120", "#55347"],
            "ticket_target": "38 tickets per week",
        },
        "Plan Terms": {
            "pip_duration": "60 days",
            "formal_review_date": "29 March 2024",
            "manager_name": "Beatriz Santamaría",
            "manager_extension": None,
        },
    },
    drop=[
        G("Employee Identity", "employee_name", "employee_first_name", "employee_id"),
        G("Health Information", "medical_condition", "accommodation_type"),
    ],
    abstract=[G("Performance Record", "escalation_case_numbers")],
    keep=["pip_duration", "ticket_target", "formal_review_date", "manager_name",
          ("manager_extension", None)],
)

record(
    id="sample-hr-02",
    category="Business & Finance",
    record_type="Job offer letter from an analytics company",
    original="""
Aldergate Analytics, Inc.
1450 Mission Street, 9th Floor · San Francisco, CA 94103

June 10, 2024

Mei-Ling Castellanos
3308 Fernwood Court, Apt 5
Oakland, CA 94602
meiling.castellanos@example.net

Dear Mei-Ling,

We are delighted to offer you the position of Senior Data Analyst on the Revenue Insights team, reporting to Dmitri Vasquez, Director of Analytics. We enjoyed our conversations during the interview process and believe your experience with pricing models will make an immediate impact.

Compensation. Your annual base salary will be $96,500, paid semi-monthly, less applicable withholdings. You will also receive a one-time sign-on bonus of $8,000, payable with your first paycheck and repayable on a pro-rata basis if you leave within 12 months. You will be eligible for the annual bonus program with a target of 10% of base salary.

Equity. Subject to board approval, you will be granted 4,200 restricted stock units vesting over four years with a one-year cliff.

Benefits. You will be eligible for medical, dental and vision coverage from your first day, a 401(k) match of 4%, and 20 days of paid time off per year.

Start date and conditions. Your anticipated start date is July 8, 2024. This offer is contingent on satisfactory completion of a background check and proof of work authorization. As we discussed, your pending green card application does not affect this offer.

Please sign and return this letter by June 17, 2024. We look forward to welcoming you.

Sincerely,
Renata Holmquist
Head of People, Aldergate Analytics
""",
    edits=[
        ("Mei-Ling Castellanos\n3308 Fernwood Court, Apt 5\nOakland, CA 94602\nmeiling.castellanos@example.net",
         "[Candidate name, address and e-mail withheld]"),
        ("Dear Mei-Ling,", "Dear Candidate,"),
        ("Your annual base salary will be $96,500, paid semi-monthly",
         "Your annual base salary will be in line with the band for the role, paid semi-monthly"),
        ("a one-time sign-on bonus of $8,000,", "a one-time sign-on bonus,"),
        ("you will be granted 4,200 restricted stock units vesting",
         "you will be granted an equity award of restricted stock units vesting"),
        (" As we discussed, your pending green card application does not affect this offer.", ""),
    ],
    base="""
- Remove the candidate's name 'Mei-Ling Castellanos', first name, home address and personal e-mail address.
- Remove the mention of the candidate's immigration status.
- Generalize the compensation figures: the base salary '$96,500', the sign-on bonus '$8,000' and the RSU grant.
""",
    smoothed="""
Turn this offer letter into something I can post as an example: no name, address, e-mail or
immigration details, and no exact salary, bonus or stock numbers. It should still show the Senior
Data Analyst title, the hiring manager, the July 8 start date, the 401(k) match and the June 17
reply deadline.
""",
    groups={
        "Candidate Identity & Contact": {
            "candidate_name": "Mei-Ling Castellanos",
            "candidate_first_name": "Mei-Ling",
            "home_address": "3308 Fernwood Court, Apt 5",
            "personal_email": "meiling.castellanos@example.net",
        },
        "Immigration Status": {"immigration_status": "pending green card application"},
        "Compensation": {
            "base_salary": "$96,500",
            "sign_on_bonus": "$8,000",
            "rsu_grant": "4,200 restricted stock units",
        },
        "Role & Terms": {
            "job_title": "Senior Data Analyst",
            "hiring_manager": "Dmitri Vasquez",
            "start_date": "July 8, 2024",
            "retirement_match": "401(k) match of 4%",
            "response_deadline": "June 17, 2024",
        },
    },
    drop=[
        G("Candidate Identity & Contact", "candidate_name", "candidate_first_name", "home_address",
          "personal_email"),
        G("Immigration Status", "immigration_status"),
    ],
    abstract=[G("Compensation", "base_salary", "sign_on_bonus", "rsu_grant")],
    keep=["job_title", "hiring_manager", "start_date", "retirement_match", "response_deadline"],
    as_json=ALL_JSON,
)

record(
    id="sample-hr-03",
    category="Professional Services",
    record_type="Recruiter candidate submittal from a staffing agency to a client",
    original="""
NORTHSTAR TALENT PARTNERS — CANDIDATE SUBMITTAL
Client: Cascadia Health Systems (Req. #CHS-DEVOPS-114, Senior Platform Engineer, hybrid Seattle)
Recruiter: Hana Kobayashi · hana.k@northstar-talent.example.com · (206) 555-0177
Submitted: 2024-05-14

Candidate: Oluwaseun Adeyemi-Park
Mobile: (425) 555-0148 · LinkedIn: linkedin.com/in/seun-adeyemi-park-demo
Location: Redmond, WA (open to 3 days on site)

Summary
Seun is a platform engineer with nine years of experience, currently a Staff Site Reliability Engineer at Pacific Crest Medical Group, where he led the migration of 140 services to Kubernetes and cut monthly cloud spend by roughly 22%. Core skills: Kubernetes, Terraform, PostgreSQL, Go and incident management. Holds the CKA and AWS Solutions Architect – Professional certifications.

Work history
2021–present: Staff SRE — led platform team of 5; on-call redesign reduced paging volume by 40%.
2018–2021: DevOps Engineer at a regional e-commerce company — built CI/CD pipelines and moved deployment from weekly to daily releases.
2015–2018: Systems Administrator at a university research lab — Linux fleet management, backup and storage.
Education: BSc Computer Engineering, 2015.

Motivation
Seun is looking to leave his current role mainly because of the on-call load (one week in three). He also shared in confidence that he needs more predictable hours because he is the primary caregiver for his mother, who is undergoing dialysis three times a week. He asked that this not be raised with the client directly.

Compensation & availability
Current base $178,000 plus a 10% bonus. Seeking $185,000–$195,000 base. Notice period: four weeks. Available for interviews Tuesday–Thursday after 2 p.m.

Recruiter assessment
Strong technical match for the requisition; excellent communicator in screening. Recommend a first-round interview with the platform team lead.

— H. Kobayashi
""",
    edits=[
        ("Candidate: Oluwaseun Adeyemi-Park\nMobile: (425) 555-0148 · LinkedIn: "
         "linkedin.com/in/seun-adeyemi-park-demo",
         "Candidate: [name withheld]\nMobile: [withheld] · LinkedIn: [withheld]"),
        ("Seun is", "The candidate is"),
        ("at Pacific Crest Medical Group, where", "at a regional healthcare provider, where"),
        (" He also shared in confidence that he needs more predictable hours because he is the primary "
         "caregiver for his mother, who is undergoing dialysis three times a week. He asked that this "
         "not be raised with the client directly.",
         " He would also value more predictable hours for personal reasons."),
        ("Current base $178,000 plus a 10% bonus.", "Current base somewhat below the expected range, plus a bonus."),
    ],
    base="""
- Remove the candidate's name 'Oluwaseun Adeyemi-Park', nickname, mobile number and LinkedIn URL.
- Remove the confidential details about the candidate's caregiving situation.
- Generalize the current employer 'Pacific Crest Medical Group' to an industry description.
- Generalize the current base salary '$178,000'.
""",
    smoothed="""
Before this submittal goes to the client's screening panel, blind it: no name, nickname, phone or
LinkedIn, nothing about his caregiving situation, a generic description of his current employer and
no exact current salary. The core skills (Kubernetes, Terraform, PostgreSQL), the four-week notice
period, the salary expectation and the requisition number must remain.
""",
    groups={
        "Candidate Identity & Contact": {
            "candidate_name": "Oluwaseun Adeyemi-Park",
            "candidate_nickname": "Seun",
            "candidate_phone": "(425) 555-0148",
            "linkedin_url": "linkedin.com/in/seun-adeyemi-park-demo",
        },
        "Caregiving Circumstances": {
            "caregiving_situation": "he is the primary caregiver for his mother, who is undergoing "
                                    "dialysis three times a week",
        },
        "Current Employment": {
            "current_employer": "Pacific Crest Medical Group",
            "current_base_salary": "$178,000",
        },
        "Fit for Requisition": {
            "requisition_number": "#CHS-DEVOPS-114",
            "core_skills": ["Kubernetes", "Terraform", "PostgreSQL"],
            "notice_period": "four weeks",
            "salary_expectation": "$185,000–$195,000",
        },
    },
    drop=[
        G("Candidate Identity & Contact", "candidate_name", "candidate_nickname", "candidate_phone",
          "linkedin_url"),
        G("Caregiving Circumstances", "caregiving_situation"),
    ],
    abstract=["current_employer", "current_base_salary"],
    keep=["core_skills", "notice_period", "salary_expectation", "requisition_number"],
)

# ---------------------------------------------------------------------------------------------
# Government & Civic
# ---------------------------------------------------------------------------------------------

record(
    id="sample-gov-01",
    category="Government & Civic",
    record_type="Residence permit renewal appointment confirmation from an immigration service point",
    original="""
National Residence and Migration Office — Lisbon Service Point 2
Appointment Confirmation · Residence Permit Renewal

Booking reference: NRMO-LX2-2024-58817
Generated: 02/05/2024 11:26

Applicant
Name: Thiago Bezerra Nogueira
Nationality: Brazilian
Date of birth: 09/06/1990
Passport no.: FX418273
Current permit no.: 1RX-009352-2021 (valid until 30/06/2024)
Address on file: Rua Elias Garcia 112, 3.º Dto., 2700-327 Amadora

Appointment
Date and time: 21/05/2024 at 14:40
Location: Lisbon Service Point 2, Avenida António Augusto de Aguiar 20, ground floor, counter area B

Documents to bring (originals and one copy of each):
– valid passport
– current residence permit card
– proof of means of subsistence (last three payslips or bank statements)
– proof of accommodation (rental contract or property deed)
– criminal record certificate from the country of nationality, apostilled

Important information
Please arrive 15 minutes before the scheduled time. Applicants who arrive more than 10 minutes late will have to rebook. The renewal fee of €172.20 is paid at the counter by card. Biometric data (photograph and fingerprints) will be collected on site.

If your permit expires before the appointment date, this confirmation serves as proof that a renewal was requested in time and may be shown to employers and public services.

To cancel or change this appointment, use the online portal with your booking reference. Do not reply to this message.
""",
    edits=[
        ("Name: Thiago Bezerra Nogueira", "Name: [withheld]"),
        ("Date of birth: 09/06/1990", "Date of birth: [withheld]"),
        ("Passport no.: FX418273", "Passport no.: [withheld]"),
        ("Current permit no.: 1RX-009352-2021", "Current permit no.: [withheld]"),
        ("Address on file: Rua Elias Garcia 112, 3.º Dto., 2700-327 Amadora",
         "Address on file: Lisbon metropolitan area"),
    ],
    base="""
- Remove the applicant's name 'Thiago Bezerra Nogueira', date of birth, passport number and current permit number.
- Generalize the applicant's residential address to the metropolitan area.
""",
    smoothed="""
I'd like to show this confirmation to my employer without my personal identifiers: please remove my
name, date of birth, passport and permit numbers and reduce my address to the general area. The
booking reference, appointment date and time, service point address, the fee and the list of
documents to bring should stay.
""",
    groups={
        "Applicant Identity": {
            "applicant_name": "Thiago Bezerra Nogueira",
            "date_of_birth": "09/06/1990",
            "passport_number": "FX418273",
            "permit_number": "1RX-009352-2021",
        },
        "Applicant Residence": {
            "residential_address": {
                "street": "Rua Elias Garcia 112, 3.º Dto.",
                "postal_code": "2700-327",
                "city": "Amadora",
            },
        },
        "Appointment Details": {
            "booking_reference": "NRMO-LX2-2024-58817",
            "appointment_datetime": "21/05/2024 at 14:40",
            "service_point_address": "Avenida António Augusto de Aguiar 20",
            "renewal_fee": "€172.20",
            "required_documents": [
                "valid passport",
                "proof of means of subsistence",
                "criminal record certificate",
            ],
        },
    },
    drop=[G("Applicant Identity", "applicant_name", "date_of_birth", "passport_number", "permit_number")],
    abstract=["residential_address"],
    keep=["booking_reference", "appointment_datetime", "service_point_address", "renewal_fee",
          "required_documents"],
)

record(
    id="sample-gov-02",
    category="Government & Civic",
    record_type="Notice of final determination from a county board of property tax appeals",
    original="""
MILLBROOK COUNTY BOARD OF PROPERTY TAX APPEALS
County Administration Building, 300 Civic Plaza, Room 214, Millbrook, IN 46901
Phone (765) 555-0112 · appeals@millbrookcounty.example.gov

NOTICE OF FINAL DETERMINATION

Appeal No.: BPTA-2024-0392
Parcel No.: 34-07-19-226-004.000-012
Owner of record: Gwendolyn Abernathy-Cho
Mailing address: PO Box 1187, Kokomo, IN 46903
Property location: 5120 Wyndham Ridge Road, Millbrook Township
Assessment year: 2024 pay 2025

The Board heard this appeal on August 20, 2024. The petitioner appeared in person and presented a private appraisal dated July 2, 2024, together with sales data for four comparable homes in the Wyndham Ridge subdivision. The county assessor's representative relied on the mass-appraisal model and one recent sale.

The Board finds that the 2024 assessed value of $412,300 overstated the market value of the property. The petitioner's comparable sales were closer in size, age and condition to the subject property, and the appraisal noted foundation settlement that the assessor had not inspected.

Determination: the assessed value is reduced to $371,800 (land $62,000; improvements $309,800), effective for the 2024 pay 2025 tax bill. A corrected statement will be mailed by the County Treasurer.

Either party may appeal this determination to the State Board of Tax Review within 45 days of the date of this notice.

Dated: September 3, 2024
For the Board: Lorraine Petrakis, Chair
""",
    edits=[
        ("Parcel No.: 34-07-19-226-004.000-012\nOwner of record: Gwendolyn Abernathy-Cho\n"
         "Mailing address: PO Box 1187, Kokomo, IN 46903",
         "Parcel No.: [withheld]\nOwner of record: [withheld]\nMailing address: [withheld]"),
        ("Property location: 5120 Wyndham Ridge Road, Millbrook Township",
         "Property location: a single-family residence in Millbrook Township"),
        ("four comparable homes in the Wyndham Ridge subdivision",
         "four comparable homes in the same neighbourhood"),
        ("the 2024 assessed value of $412,300 overstated",
         "the original 2024 assessed value, a little over $400,000, overstated"),
    ],
    base="""
- Remove the owner's name 'Gwendolyn Abernathy-Cho', the mailing address and the parcel number.
- Generalize the property location: the street address and the subdivision name.
- Generalize the original assessed value '$412,300'.
""",
    smoothed="""
I'm writing up this appeal as a case study, so drop the owner's name, mailing address and parcel
number, make the property's street and subdivision generic and round off the original assessment;
keep the appeal number, the hearing date, the reduced $371,800 value and the 45-day appeal window.
""",
    groups={
        "Owner of Record": {
            "owner_name": "Gwendolyn Abernathy-Cho",
            "mailing_address": "PO Box 1187, Kokomo, IN 46903",
            "parcel_number": "34-07-19-226-004.000-012",
        },
        "Property Details": {
            "property_address": "5120 Wyndham Ridge Road",
            "subdivision": "Wyndham Ridge subdivision",
        },
        "Valuation History": {
            "original_assessed_value": "$412,300",
            "revised_assessed_value": "$371,800",
        },
        "Appeal Administration": {
            "appeal_number": "BPTA-2024-0392",
            "hearing_date": "August 20, 2024",
            "appeal_window": "within 45 days",
        },
    },
    drop=["owner_name", "mailing_address", "parcel_number"],
    abstract=[
        G("Property Details", "property_address", "subdivision"),
        G("Valuation History", "original_assessed_value"),
    ],
    keep=["appeal_number", "hearing_date", "revised_assessed_value", "appeal_window"],
    as_json=ALL_JSON,
)

record(
    id="sample-gov-03",
    category="Government & Civic",
    record_type="Unemployment insurance claimant contact log from a state workforce agency call center",
    original="""
STATE WORKFORCE SERVICES — CLAIMANT CONTACT LOG
Claim ID: UI-2024-0619-77345   Program: Regular UI   Office: Fresno Call Center

Claimant: Darnell Whitcombe   SSN (last 4): 6621   DOB: 08/14/1979
Phone: (559) 555-0126   Preferred language: English

06/19/2024 09:12 — Inbound call, agent T. Nakamura (#2210)
Claimant filed initial claim online on 06/17 and called to confirm receipt. States he was laid off on 06/14/2024 after the Fremont Street warehouse of Valley Freight Co. closed; 41 employees affected. Confirmed separation reason with employer portal (mass layoff notice WARN-24-0117). Explained the one-week waiting period and how to certify bi-weekly online.

06/26/2024 14:35 — Outbound call, agent T. Nakamura (#2210)
Monetary determination issued: weekly benefit amount $487, maximum benefit amount $12,662. Claimant asked about training options; referred to the Workforce Training Grant orientation on 07/09/2024 at 10:00 at the Blackstone Ave career center.

07/03/2024 11:02 — Inbound call, agent R. Okafor (#1984)
Claimant reported he worked two days through a temp agency during the week ending 06/29 and earned $312 gross. Advised to report earnings on his certification; a partial benefit will be calculated. Claimant also mentioned he has been behind on child support since the layoff and asked whether benefits can be garnished — explained that the Department of Child Support Services may issue an income withholding order and provided their number.

07/08/2024 16:20 — Inbound call, agent T. Nakamura (#2210)
Claimant asked whether attending the training orientation would affect his work-search requirement. Explained that approved training may count toward work search once he is enrolled, and that he must still report any job offers he receives. Claimant confirmed he has applied to three warehouse supervisor positions this week and has an interview on 07/11. Reminded him to keep a work-search log with employer names, dates and contact methods, as it may be requested during an eligibility review.

Next certification due: 07/13/2024.
Status: Active, payable.
""",
    edits=[
        ("Claimant: Darnell Whitcombe   SSN (last 4): 6621   DOB: 08/14/1979\nPhone: (559) 555-0126",
         "Claimant: [withheld]   SSN (last 4): [withheld]   DOB: [withheld]\nPhone: [withheld]"),
        ("after the Fremont Street warehouse of Valley Freight Co. closed",
         "after a local warehouse of a regional freight company closed"),
        ("Claimant also mentioned he has been behind on child support since the layoff and asked whether "
         "benefits can be garnished — explained that the Department of Child Support Services may issue "
         "an income withholding order and provided their number.",
         "Claimant asked a question about possible deductions from benefits; general information and a "
         "referral number were provided."),
    ],
    base="""
- Remove the claimant's name 'Darnell Whitcombe', SSN digits, date of birth and phone number.
- Remove the information about the claimant's child support situation.
- Generalize the former employer 'Valley Freight Co.' and the 'Fremont Street warehouse' location.
""",
    smoothed="""
For the quality-review sample, please de-identify this contact log: remove the claimant's name, SSN
digits, birth date, phone and the child-support remarks, and describe the employer and warehouse only
generally. The claim ID, the $487 weekly benefit amount, the training orientation and the next
certification date must remain.
""",
    groups={
        "Claimant Identity": {
            "claimant_name": "Darnell Whitcombe",
            "ssn_last_four": "6621",
            "claimant_dob": "08/14/1979",
            "claimant_phone": "(559) 555-0126",
        },
        "Family Obligations": {
            "child_support_status": "he has been behind on child support since the layoff",
        },
        "Separation Details": {
            "former_employer": "Valley Freight Co.",
            "separation_location": "Fremont Street warehouse",
        },
        "Claim Status": {
            "claim_id": "UI-2024-0619-77345",
            "weekly_benefit_amount": "$487",
            "training_orientation": "Workforce Training Grant orientation",
            "next_certification_date": "07/13/2024",
        },
    },
    drop=[
        G("Claimant Identity", "claimant_name", "ssn_last_four", "claimant_dob", "claimant_phone"),
        G("Family Obligations", "child_support_status"),
    ],
    abstract=[G("Separation Details", "former_employer", "separation_location")],
    keep=["claim_id", "weekly_benefit_amount", "training_orientation", "next_certification_date"],
)

# ---------------------------------------------------------------------------------------------
# Education & Training
# ---------------------------------------------------------------------------------------------

record(
    id="sample-edu-01",
    category="Education & Training",
    record_type="Academic probation letter from a university registrar",
    original="""
Office of the University Registrar
Calloway State University · 1200 College Drive · Ridgefield, MO 64120

January 8, 2025

Zainab Farouk-Mensah
Student ID: 900417352
zfaroukmensah@students.calloway.example.edu

Subject: Academic Probation — Spring 2025

Dear Zainab,

Your cumulative grade point average at the end of the Fall 2024 term is 1.82, which is below the minimum of 2.00 required for good academic standing. In accordance with the Undergraduate Catalog, section 4.7, you are placed on academic probation for the Spring 2025 term.

We understand from your petition that your performance was affected by a hospitalization for appendicitis in October, which caused you to miss three weeks of classes. Because you did not withdraw from MATH 214 and CHEM 110 before the deadline, both courses were recorded with a grade of F. You may repeat these courses; the new grade will replace the F in your GPA calculation.

While on probation you must:
• enroll in no more than 13 credit hours;
• meet with your academic advisor, Dr. Helena Voss, at least three times during the term;
• complete the Academic Success Workshop series by March 14, 2025; and
• earn a term GPA of at least 2.25.

Students who do not meet these conditions may be academically suspended. If you have questions, please contact our office at (816) 555-0155.

Sincerely,
Michael Tran-Ellison
Associate Registrar
""",
    edits=[
        ("Zainab Farouk-Mensah\nStudent ID: 900417352\nzfaroukmensah@students.calloway.example.edu",
         "[Student name, ID and e-mail withheld]"),
        ("Dear Zainab,", "Dear Student,"),
        ("affected by a hospitalization for appendicitis in October, which caused you to miss three "
         "weeks of classes",
         "affected by a documented medical issue during the term, which caused you to miss several "
         "weeks of classes"),
    ],
    base="""
- Remove the student's name 'Zainab Farouk-Mensah', first name, student ID and e-mail address.
- Generalize the medical reason 'a hospitalization for appendicitis in October' to a non-specific description.
- Keep the GPA, the failed course codes, the advisor's name and the probation conditions.
""",
    smoothed="""
Please anonymise this probation letter for the advising handbook: drop the student's name, ID and
e-mail and make the medical reason non-specific, but keep the 1.82 GPA, the course codes MATH 214 and
CHEM 110, Dr. Helena Voss, the 13-credit-hour cap and the workshop deadline.
""",
    groups={
        "Student Identity": {
            "student_name": "Zainab Farouk-Mensah",
            "student_first_name": "Zainab",
            "student_id": "900417352",
            "student_email": "zfaroukmensah@students.calloway.example.edu",
        },
        "Health Disclosure": {"medical_reason": "a hospitalization for appendicitis in October"},
        "Academic Standing": {
            "cumulative_gpa": "1.82",
            "failed_courses": ["MATH 214", "CHEM 110"],
            "advisor_name": "Dr. Helena Voss",
            "credit_limit": "13 credit hours",
            "workshop_deadline": "March 14, 2025",
        },
    },
    drop=[G("Student Identity", "student_name", "student_first_name", "student_id", "student_email")],
    abstract=["medical_reason"],
    keep=["cumulative_gpa", "failed_courses", "advisor_name", "credit_limit", "workshop_deadline"],
)

record(
    id="sample-edu-02",
    category="Education & Training",
    record_type="Middle-school parent-teacher conference notes",
    original="""
Parent–Teacher Conference Notes
Linden Park Middle School · Grade 7 ELA · Room 118
Teacher: Ms. Roberta Kline
Date: October 17, 2024, 3:45–4:15 p.m.

Student: Mateo Iturbide (Grade 7, homeroom 7C)
Attending: Gabriela Iturbide (mother); Mr. Osman Farah (learning support)

Strengths
Mateo is an enthusiastic contributor in class discussions and wrote one of the strongest personal narratives in the class, about his grandfather's fishing boat. He is kind to classmates and often helps set up the classroom library.

Concerns
Reading fluency is still below grade level: his fall benchmark placed him at Lexile 780L, compared with a grade 7 target range of roughly 925L–1070L. He avoids reading aloud and takes much longer on timed assessments. Mrs. Iturbide shared that Mateo was diagnosed with dyslexia in fourth grade at a private clinic; this was not in our file because the family moved here from Chula Vista in August. Mr. Farah will request the evaluation report so that an IEP meeting can be scheduled.

Agreed next steps
1. Extended time (1.5x) on tests and quizzes, effective immediately.
2. Access to audiobook versions of the class novel.
3. Twenty minutes of paired reading at home, four nights a week, logged in the planner.
4. Follow-up conference on December 5, 2024 to review progress.

Parent contact: (619) 555-0171 (mother's cell).

R. Kline
""",
    edits=[
        ("Student: Mateo Iturbide (Grade 7, homeroom 7C)", "Student: [Student] (Grade 7)"),
        ("Attending: Gabriela Iturbide (mother);", "Attending: parent/guardian;"),
        ("Mateo is an enthusiastic", "The student is an enthusiastic"),
        ("Mrs. Iturbide shared that Mateo was diagnosed with dyslexia in fourth grade at a private clinic; "
         "this was not in our file because the family moved here from Chula Vista in August.",
         "The parent shared that the student has a previously diagnosed learning difference; this was "
         "not in our file because the family moved into the district in August."),
        ("Parent contact: (619) 555-0171 (mother's cell).", "Parent contact: number on file."),
    ],
    base="""
- Generalize the student's name 'Mateo Iturbide' and the parent's name to their roles.
- Generalize the parent's phone number to a reference to the school file.
- Generalize the diagnosis 'dyslexia' and the previous city 'Chula Vista' to non-specific descriptions.
""",
    smoothed="""
I want to use these conference notes in a staff training session: refer to the student and parent
only by their roles, don't include the phone number, and keep the diagnosis and the family's previous
city vague. The reading level (Lexile 780L), the extended-time accommodation, the teacher's name and
the December 5 follow-up should stay.
""",
    groups={
        "Student & Family Identity": {
            "student_name": "Mateo Iturbide",
            "parent_name": "Gabriela Iturbide",
            "parent_phone": "(619) 555-0171",
        },
        "Learning Profile": {
            "learning_disability": "dyslexia",
            "previous_city": "Chula Vista",
        },
        "Progress & Supports": {
            "reading_level": "Lexile 780L",
            "accommodation": "Extended time (1.5x)",
            "teacher_name": "Ms. Roberta Kline",
            "follow_up_date": "December 5, 2024",
        },
    },
    drop=None,
    abstract=[
        G("Student & Family Identity", "student_name", "parent_name", "parent_phone"),
        G("Learning Profile", "learning_disability", "previous_city"),
    ],
    keep=["reading_level", "accommodation", "teacher_name", "follow_up_date"],
)

record(
    id="sample-edu-03",
    category="Education & Training",
    record_type="Scholarship award notification e-mail from a private foundation",
    original="""
From: Harbor Light Foundation <scholarships@harborlight.example.org>
To: Anh Thư Nguyễn <anhthu.nguyen07@example.com>
Date: Thu, 25 Apr 2024 10:31:07 -0500
Subject: Congratulations — Harbor Light Foundation STEM Scholarship 2024–25

Dear Anh Thư,

On behalf of the selection committee, I am delighted to tell you that you have been selected as a recipient of the Harbor Light Foundation STEM Scholarship for the 2024–25 academic year. The award is $6,000, disbursed in two equal payments directly to your university at the start of the fall and spring semesters.

The committee was deeply moved by your essay about growing up in Biloxi, Mississippi, helping your parents run their nail salon after your father's stroke in 2019, and teaching yourself calculus from library books. Your financial information (reported household income of $38,200 for a household of five) placed you in our highest-need tier, which also qualifies you for a one-time $500 book stipend.

To accept the award, please complete these steps by May 15, 2024:
1. Sign the acceptance form in the applicant portal.
2. Upload your final high school transcript.
3. Send a photo for our recipients page (optional).

The scholarship is renewable for up to three additional years provided you maintain a cumulative GPA of 3.0 and remain enrolled full-time in a STEM major. We also invite you to our recipients' luncheon on June 8, 2024 at the Gulfport Yacht Club.

Congratulations again,
Dolores Whitaker-Baines
Scholarship Program Director
""",
    edits=[
        ("To: Anh Thư Nguyễn <anhthu.nguyen07@example.com>", "To: [recipient]"),
        ("Dear Anh Thư,", "Dear Scholar,"),
        ("your essay about growing up in Biloxi, Mississippi, helping your parents run their nail salon "
         "after your father's stroke in 2019, and teaching yourself calculus from library books",
         "your essay about growing up on the Gulf Coast, helping your parents run the family business "
         "through a difficult period, and teaching yourself calculus from library books"),
        ("Your financial information (reported household income of $38,200 for a household of five) "
         "placed you",
         "Your financial information placed you"),
    ],
    base="""
- Remove the recipient's name 'Anh Thư Nguyễn', first name and e-mail address from the message.
- Remove the household income, household size and the father's health event.
- Generalize the hometown 'Biloxi, Mississippi' and the parents' business 'nail salon'.
""",
    smoothed="""
We'd like to quote this award e-mail in our newsletter without identifying the student: remove her
name and e-mail, the household income and size and her father's illness, and keep her hometown and
her parents' business general. The scholarship name, the $6,000 amount, the May 15 acceptance
deadline and the GPA of 3.0 renewal rule need to stay.
""",
    groups={
        "Recipient Identity": {
            "recipient_name": "Anh Thư Nguyễn",
            "recipient_first_name": "Anh Thư",
            "recipient_email": "anhthu.nguyen07@example.com",
        },
        "Financial & Family Circumstances": {
            "household_income": "$38,200",
            "household_size": "household of five",
            "family_health_event": "your father's stroke in 2019",
        },
        "Background": {
            "hometown": "Biloxi, Mississippi",
            "parents_business": "nail salon",
        },
        "Award Terms": {
            "scholarship_name": "Harbor Light Foundation STEM Scholarship",
            "award_amount": "$6,000",
            "acceptance_deadline": "May 15, 2024",
            "renewal_gpa": "GPA of 3.0",
        },
    },
    drop=[
        G("Recipient Identity", "recipient_name", "recipient_first_name", "recipient_email"),
        G("Financial & Family Circumstances", "household_income", "household_size", "family_health_event"),
    ],
    abstract=["hometown", "parents_business"],
    keep=["scholarship_name", "award_amount", "acceptance_deadline", "renewal_gpa"],
    as_json=ALL_JSON,
)

# ---------------------------------------------------------------------------------------------
# Personal & Family (messages, letters, journals)
# ---------------------------------------------------------------------------------------------

record(
    id="sample-personal-01",
    category="Personal & Family",
    record_type="Text-message thread between two sisters planning a surprise birthday party",
    original="""
Messages — Ania 🌻
Sat 1 Jun 2024

Ania: ok so mum has NO idea. I told her we're just doing dinner at mine on the 22nd 😂
Zoë: perfect. Lantern Room confirmed??
Ania: yes!! The Lantern Room, upstairs space, Saturday 22 June from 7pm. they need final numbers by the 15th
Zoë: put us down for 40, I've counted the cousins twice
Ania: 40 it is. deposit was £250, I paid it, send me half whenever
Zoë: sending now. also pls update my address for the invites – I've moved into Flat 3, 19 Cranbourne Terrace, Leith. long story
Ania: wait WHAT. since when
Zoë: since the 3rd. me and Piotr are done. the divorce hearing is on the 14th, please don't say anything to mum before the party, I'll tell her after
Ania: oh Zo 💔 of course. are you ok? do you need anything?
Zoë: honestly I'm fine, just tired. work has been good about it
Ania: ring me tonight, any time after 9. I mean it
Zoë: I will. ok back to party stuff — cake from Wiśniewski's bakery, the lemon one she had at Kasia's wedding?
Ania: yes obviously. I'll order tomorrow. can you do the photo slideshow? need pics from the 80s and 90s
Zoë: on it. I'll raid the albums at dad's
Ania: love you. Zoë Małecka, party planner extraordinaire
Zoë: haha. love you too x
""",
    edits=[
        ("I've moved into Flat 3, 19 Cranbourne Terrace, Leith. long story",
         "I've moved, will send the new address separately. long story"),
        ("since the 3rd. me and Piotr are done. the divorce hearing is on the 14th, please don't say "
         "anything to mum before the party, I'll tell her after",
         "recently. some things have changed at home, please don't say anything to mum before the "
         "party, I'll tell her after"),
        ("Zoë Małecka, party planner extraordinaire", "party planner extraordinaire"),
    ],
    base="""
- Remove Zoë's full name 'Zoë Małecka' and her new home address from the thread.
- Remove the name of Zoë's spouse and the mention of the divorce hearing.
- Remove Zoë's secondary phone number, if any.
- Generalize when Zoë moved ('since the 3rd').
""",
    smoothed="""
I want to show this chat to our aunt so she can help with the party, but she shouldn't see Zoë's
surname, her new address or anything about her split with Piotr; keep the date of the party, The
Lantern Room, the 40 guests and the £250 deposit.
""",
    groups={
        "Zoë Małecka – Identity & Contact": {
            "sender_full_name": "Zoë Małecka",
            "new_address": "Flat 3, 19 Cranbourne Terrace, Leith",
            "secondary_phone": None,
            "move_date": "since the 3rd",
        },
        "Zoë Małecka – Relationship Status": {
            "spouse_name": "Piotr",
            "divorce_hearing": "the divorce hearing is on the 14th",
        },
        "Surprise Party Plans": {
            "party_date": "Saturday 22 June",
            "venue": "The Lantern Room",
            "guest_count": 40,
            "deposit": "£250",
        },
    },
    drop=["sender_full_name", "new_address", "spouse_name", "divorce_hearing", "secondary_phone"],
    abstract=["move_date"],
    keep=["party_date", "venue", "guest_count", "deposit"],
)

record(
    id="sample-personal-02",
    category="Personal & Family",
    record_type="E-mail from an adult son to his siblings about their father's diagnosis and care home",
    original="""
From: Jorrit Haverkamp <jorrit.h@example.nl>
To: Saskia Haverkamp; Pieter Haverkamp
Date: 11 March 2024, 22:47
Subject: Papa — update after today's meeting at Elmstead Gardens

Hi both,

Long email, sorry. I went with Papa to the geriatric clinic on Friday and then to the meeting at Elmstead Gardens today, so here is where things stand.

The geriatrician, Dr. Annelies Brouwer, confirmed what we suspected: early-stage Alzheimer's disease. His MMSE score was 21 out of 30. She has started him on donepezil 5 mg, increasing to 10 mg after four weeks if he tolerates it. She was clear that he should not be driving anymore, and I have taken the keys to the Volvo for now. He was upset but accepted it.

Elmstead Gardens has a room available from 1 April in the assisted-living wing (not the closed dementia unit). The monthly cost is €3,450, of which his pension and the care allowance cover about €1,150, which leaves €2,300. If we split that three ways it is roughly €767 each per month. I know that is a stretch for Pieter right now, so I'm happy to cover more for the first six months.

Saskia, I know you wanted to be there today — Papa asked for you twice. If you can come up on the weekend of 6 April, the two of you could sort out what furniture goes with him; the room is small, so realistically his chair, the bookcase and the photos of Mama. The staff said residents may bring their own bedding and a small television.

Papa's house at Wilhelminalaan 31 would then stand empty. We don't need to decide about selling yet, but we should at least talk to the notary before summer.

Can we do a video call on Sunday 17 March at 20:00 to decide? I'd like to sign the Elmstead contract by 22 March.

Liefs,
Jorrit
""",
    edits=[
        ("Elmstead Gardens", "the care home"),
        ("The geriatrician, Dr. Annelies Brouwer, confirmed what we suspected: early-stage Alzheimer's "
         "disease. His MMSE score was 21 out of 30. She has started him on donepezil 5 mg, increasing to "
         "10 mg after four weeks if he tolerates it.",
         "The geriatrician confirmed what we suspected; the details are in the clinic letter. She has "
         "started him on a new medication and will review the dose after four weeks."),
        ("the care home has a room", "The care home has a room"),
        (" (not the closed dementia unit)", ""),
        ("Papa's house at Wilhelminalaan 31 would", "Papa's house would"),
        ("sign the Elmstead contract", "sign the contract"),
    ],
    base="""
- Remove the father's diagnosis, his cognitive test score and his medication.
- Remove the address of the father's house.
- Generalize the care home name 'Elmstead Gardens' and the geriatrician's name.
""",
    smoothed="""
I'm forwarding this to our family mediator — please take out Papa's diagnosis, test score, medication
and the address of his house, and don't name the care home or the doctor. The room date of 1 April,
the €767 each per month split, the Sunday 17 March at 20:00 call and the 22 March contract deadline
must stay.
""",
    groups={
        "Father's Health Information": {
            "diagnosis": "early-stage Alzheimer's disease",
            "cognitive_score": "MMSE score was 21 out of 30",
            "medication": "donepezil 5 mg",
        },
        "Father's Property": {"father_home_address": "Wilhelminalaan 31"},
        "Care Arrangements": {
            "care_home_name": "Elmstead Gardens",
            "geriatrician_name": "Dr. Annelies Brouwer",
            "room_available_date": "1 April",
            "monthly_cost_share": "€767 each per month",
        },
        "Family Decision": {
            "call_datetime": "Sunday 17 March at 20:00",
            "contract_deadline": "22 March",
        },
    },
    drop=[
        G("Father's Health Information", "diagnosis", "cognitive_score", "medication"),
        G("Father's Property", "father_home_address"),
    ],
    abstract=[G("Care Arrangements", "care_home_name", "geriatrician_name")],
    keep=["room_available_date", "monthly_cost_share", "call_datetime", "contract_deadline"],
    as_json=ALL_JSON,
)

record(
    id="sample-personal-03",
    category="Personal & Family",
    record_type="Wedding RSVP reply e-mail with travel details",
    original="""
From: Joaquim Sá <joaquim.sa.music@example.com>
To: Inês & Callum <rsvp@ines-and-callum.example.com>
Date: 2 August 2024, 08:19
Subject: RE: RSVP + travel details

Olá Inês and Callum!

Yes, yes, yes — Marta and I will both be there on 14 September 2024, and we would not miss the ceremony at Quinta da Ribafria for anything. Thank you for the lovely invitation (the illustrated map of Sintra is already on our fridge).

Our travel details, as requested for the shuttle list: we fly TP 1342 from Porto, landing in Lisbon on Friday 13 September at 17:55, and we are staying at the Casa do Largo guesthouse in Sintra (booking confirmation 5512-ABX-09). We would love seats on the Saturday 15:30 shuttle from Sintra train station.

Menu choices: I'll have the cod, Marta the vegetarian risotto. Marta is six months pregnant, so no wine for her, and she may need a seat near an exit.

We will bring the guitar for the after-party as promised. Any song requests?

Abraços,
Joaquim
""",
    edits=[
        ("we fly TP 1342 from Porto, landing in Lisbon on Friday 13 September at 17:55, and we are "
         "staying at the Casa do Largo guesthouse in Sintra (booking confirmation 5512-ABX-09).",
         "we fly in from Porto, landing in Lisbon on the Friday evening, and we have a guesthouse "
         "booked in Sintra."),
        ("Marta is six months pregnant, so no wine for her", "Marta is expecting, so no wine for her"),
    ],
    base="""
- Generalize the flight number 'TP 1342' and the arrival date and time.
- Generalize the guesthouse booking details.
- Generalize the guest's pregnancy stage 'six months pregnant'.
""",
    smoothed="""
Could you make the travel details in this RSVP less specific before I paste it into the shared
planning doc — no flight number, exact arrival time, booking code or how far along Marta is — while
keeping the wedding date, Quinta da Ribafria, the Saturday 15:30 shuttle and the menu choices?
""",
    groups={
        "Guest Travel Details": {
            "flight_number": "TP 1342",
            "arrival_datetime": "Friday 13 September at 17:55",
            "lodging_booking": "booking confirmation 5512-ABX-09",
        },
        "Guest Health": {"guest_pregnancy": "six months pregnant"},
        "Wedding Logistics": {
            "wedding_date": "14 September 2024",
            "venue": "Quinta da Ribafria",
            "shuttle": "Saturday 15:30 shuttle",
            "menu_choices": ["the cod", "the vegetarian risotto"],
        },
    },
    drop={"selected": {}, "group": False},
    abstract=["flight_number", "arrival_datetime", "lodging_booking", "guest_pregnancy"],
    keep=["wedding_date", "venue", "shuttle", "menu_choices"],
)

record(
    id="sample-personal-04",
    category="Personal & Family",
    record_type="Personal journal entry about recovery from gambling debt",
    original="""
Tuesday 4 June 2024 — kitchen table, 11:40 pm

214 days without a bet today. I keep writing the number down because a year ago I couldn't have imagined it. Tomas, my sponsor from the Thursday meeting at St. Brendan's hall, says I should stop counting and start living, but the counting still helps.

Paid the last instalment to Quickfund Loans this morning — £180, reference QF-77-301945. That leaves the credit card with Albion Card Services (£2,940 left) and the £1,500 I still owe my brother Declan. When I added it all up in January the total was £11,860. Now it's £4,440. I cried a bit in the car park.

Things that helped this month:
- the blocking app on my phone that the support group recommended
- handing my bank card to Orla on Fridays
- walking the dog instead of watching the match at the pub

Things that didn't:
- payday. Always payday. Next one is the 28th.
- an email from my old betting site offering "£50 in free bets, welcome back". Deleted it and blocked the sender.

Orla asked last night whether we can start looking at flats again next spring. I said yes, and I think I meant it. I want to save £200 a month from July — small, but it's ours.

Note to self: call the debt advice line (0808 555 0133) before the card interest goes up in August.
""",
    edits=[
        ("Tomas, my sponsor from the Thursday meeting at St. Brendan's hall, says",
         "My sponsor from the weekly meeting says"),
        ("Paid the last instalment to Quickfund Loans this morning — £180, reference QF-77-301945. "
         "That leaves the credit card with Albion Card Services (£2,940 left) and the £1,500 I still "
         "owe my brother Declan. When I added it all up in January the total was £11,860. Now it's "
         "£4,440.",
         "Paid off one of the loans completely this morning. That leaves a credit card and what I "
         "still owe my brother. When I added it all up in January the total was over ten thousand "
         "pounds. Now it's under five thousand."),
    ],
    base="""
- Remove the sponsor's name 'Tomas' and the meeting location.
- Remove the names of the creditors, the loan reference number and the brother's name.
- Generalize the total debt figures '£11,860' and '£4,440' to rough amounts.
""",
    smoothed="""
I'd like to share this journal page with my online support group, so take out my sponsor's name,
where we meet, my lenders, the loan reference and my brother's name, and make the debt totals
approximate — but keep the 214 days count, the £200 a month savings goal and the debt advice line
number.
""",
    groups={
        "Support Network": {
            "sponsor_name": "Tomas",
            "meeting_location": "St. Brendan's hall",
            "brother_name": "Declan",
        },
        "Creditors & References": {
            "creditor_names": ["Quickfund Loans", "Albion Card Services"],
            "loan_reference": "QF-77-301945",
        },
        "Debt Figures": {
            "total_debt_january": "£11,860",
            "remaining_debt": "£4,440",
        },
        "Recovery Progress": {
            "days_bet_free": 214,
            "savings_goal": "£200 a month",
            "debt_advice_line": "0808 555 0133",
        },
    },
    drop=["sponsor_name", "meeting_location", "creditor_names", "loan_reference", "brother_name"],
    abstract=[G("Debt Figures", "total_debt_january", "remaining_debt")],
    keep=["days_bet_free", "savings_goal", "debt_advice_line"],
)

# ---------------------------------------------------------------------------------------------
# Other domains
# ---------------------------------------------------------------------------------------------

record(
    id="sample-comm-01",
    category="Community & Social",
    record_type="Volunteer incident report from a community food pantry",
    original="""
EASTSIDE COMMUNITY PANTRY — VOLUNTEER INCIDENT REPORT
Form VI-3 (rev. 2023)

Date of incident: Saturday, 9 March 2024    Time: approx. 10:50
Location: Distribution hall, 415 Maple Street (side entrance)
Reported by: Hollis Grant-Ferreira, shift lead (volunteer no. V-0928)
Persons involved: client household #H-22871 (Mrs. Dorota Szymańska); volunteer Tyrese Okafor

Description
During the Saturday distribution, Mrs. Szymańska slipped on melted snow near the side entrance while carrying two grocery bags and fell onto her right hip. Tyrese, who was stacking crates nearby, helped her to a chair. She said she was embarrassed and did not want an ambulance. She mentioned that she has osteoporosis and takes blood thinners, so I called 911 anyway at 10:56. Paramedics arrived at 11:08, assessed her and took her to St. Columba Hospital as a precaution. Her son, Mr. Krzysztof Szymański, was called at (312) 555-0163 and met her there.

Follow-up
Floor mats have been placed at the side entrance and a wet-floor sign is now part of the opening checklist. Tyrese has been thanked for his quick help. I phoned the household on Monday 11 March: no fracture; she is bruised and resting at home and plans to come next week.

Signature: H. Grant-Ferreira
""",
    edits=[
        ("Reported by: Hollis Grant-Ferreira, shift lead (volunteer no. V-0928)",
         "Reported by: shift lead"),
        ("Persons involved: client household #H-22871 (Mrs. Dorota Szymańska); volunteer Tyrese Okafor",
         "Persons involved: one client; one volunteer"),
        ("Mrs. Szymańska slipped", "the client slipped"),
        ("Tyrese, who was stacking", "A volunteer who was stacking"),
        ("She mentioned that she has osteoporosis and takes blood thinners, so I called 911 anyway",
         "She mentioned health conditions that raise the risk from a fall, so I called 911 anyway"),
        ("took her to St. Columba Hospital", "took her to a local hospital"),
        ("Her son, Mr. Krzysztof Szymański, was called at (312) 555-0163 and met her there.",
         "A family member was called and met her there."),
        ("Tyrese has been thanked", "The volunteer has been thanked"),
        ("Signature: H. Grant-Ferreira", "Signature: [shift lead]"),
    ],
    base="""
- Remove the client's name 'Dorota Szymańska', household number and health conditions.
- Remove the son's name and phone number.
- Remove the names and volunteer number of the volunteers involved.
- Generalize the hospital name 'St. Columba Hospital'.
""",
    smoothed="""
For the county safety newsletter, please strip every name, number and health detail from this
incident report and just say she went to a local hospital.
""",
    groups={
        "Client Identity & Health": {
            "client_name": "Dorota Szymańska",
            "client_household_id": "#H-22871",
            "client_health_conditions": ["osteoporosis", "blood thinners"],
        },
        "Client Family Contact": {
            "son_name": "Krzysztof Szymański",
            "son_phone": "(312) 555-0163",
        },
        "Volunteer Identity": {
            "reporter_name": "Hollis Grant-Ferreira",
            "reporter_volunteer_number": "V-0928",
            "volunteer_name": "Tyrese Okafor",
        },
        "Incident Response": {"hospital_name": "St. Columba Hospital"},
    },
    drop=[
        G("Client Identity & Health", "client_name", "client_household_id", "client_health_conditions"),
        G("Client Family Contact", "son_name", "son_phone"),
        G("Volunteer Identity", "reporter_name", "reporter_volunteer_number", "volunteer_name"),
    ],
    abstract=["hospital_name"],
    keep=[],
)

record(
    id="sample-media-01",
    category="Media & Communication",
    record_type="Podcast guest booking e-mail with release-form summary",
    original="""
From: Bianca Roos-Delgado <bianca@lowtideaudio.example.com>
To: Emeka Obiora-Laurent <emeka.ol@example.org>
Date: 15 July 2024, 13:02
Subject: Guest booking — "Second Acts" episode 87 + release form

Hi Emeka,

Thanks so much for agreeing to come on Second Acts! Our host and I loved your story about leaving corporate law at 45 to open a bicycle repair co-op, and we think listeners who are contemplating a late career change will get a lot out of it.

Recording details
• Date: Tuesday 30 July 2024, 10:00–11:30
• Place: Low Tide Audio, Studio B, 12 Harrington Street, Cape Town (rear parking lot, gate code 4826#)
• Producer on the day: me (mobile +27 21 555 0184)

Before the session, could you send a short bio (80–100 words) and a headshot? If you're comfortable with it, our host would like to ask about the period in 2019 when you were treated for burnout at the Kloofnek clinic — only if you want to; just tell me either way and we will leave it out completely otherwise.

Release form
I've attached our standard guest release. In short, it grants Low Tide Audio the right to publish the recording and edited clips, lets you request removal of specific personal details within 14 days of recording, and confirms that guests are not paid. Please sign and return it by 26 July.

Looking forward to it!
Bianca Roos-Delgado
Producer, Low Tide Audio
""",
    edits=[
        ("To: Emeka Obiora-Laurent <emeka.ol@example.org>", "To: [guest]"),
        ("Hi Emeka,", "Hi there,"),
        ("leaving corporate law at 45 to open", "leaving corporate law in mid-career to open"),
        ("• Date: Tuesday 30 July 2024, 10:00–11:30", "• Date: late July 2024, morning session"),
        (" (rear parking lot, gate code 4826#)", " (rear parking lot)"),
        ("our host would like to ask about the period in 2019 when you were treated for burnout at the "
         "Kloofnek clinic — only if you want to;",
         "our host would like to ask about a difficult period in your life — only if you want to;"),
    ],
    base="""
- Remove the guest's name 'Emeka Obiora-Laurent', first name and e-mail address.
- Remove the mention of the guest's burnout treatment and the clinic.
- Remove the studio parking gate code.
- Generalize the guest's age at the career change and the recording date and time.
""",
    smoothed="""
Please clean up this booking e-mail before it goes into our public production wiki: no guest name or
e-mail, nothing about his burnout treatment, no gate code, and only an approximate recording date and
career-change age.
""",
    groups={
        "Guest Identity & Contact": {
            "guest_name": "Emeka Obiora-Laurent",
            "guest_first_name": "Emeka",
            "guest_email": "emeka.ol@example.org",
        },
        "Guest Health History": {
            "burnout_treatment": "treated for burnout at the Kloofnek clinic",
        },
        "Studio Access": {"parking_gate_code": "4826#"},
        "Guest Background & Scheduling": {
            "career_change_age": "at 45",
            "recording_datetime": "Tuesday 30 July 2024, 10:00–11:30",
        },
    },
    drop=[
        G("Guest Identity & Contact", "guest_name", "guest_first_name", "guest_email"),
        G("Guest Health History", "burnout_treatment"),
        G("Studio Access", "parking_gate_code"),
    ],
    abstract=["career_change_age", "recording_datetime"],
    keep=[],
    as_json=ALL_JSON,
)

record(
    id="sample-travel-01",
    category="Recreation & Lifestyle",
    record_type="Trekking tour booking confirmation and participant sheet",
    original="""
Fitz Roy Trails — Booking Confirmation & Participant Sheet
Booking no.: FRT-24-1107
Trip: Huemul Circuit, 4 days / 3 nights, departing El Chaltén
Dates: 18–21 November 2024
Guides: Matías Ferreyra (lead), Lucía Paz (assistant)

Lead traveller
Name: Siobhán Kearney-Walsh
Passport: PK7730215 (Ireland), exp. 03/2031
Date of birth: 22/01/1987
Email: siobhan.kw@example.ie
Phone: +353 85 555 0192

Medical & dietary (confidential – guides only)
Condition: epilepsy, well controlled; last seizure in 2019. Medication: levetiracetam 750 mg twice daily (carries 2 spare days). Dietary: coeliac – strict gluten-free.
Emergency contact: Rónán Kearney (brother), +353 87 555 0140

Payment
Trip price USD 1,480 per person; deposit USD 450 paid 03/06/2024 by card ending 9021; balance USD 1,030 due 18/10/2024.

What's included
Bilingual guide team, tents, stoves and fuel, park entry, harness and helmet for the river traverse, and all meals on the trail. Not included: sleeping bag rental (USD 35) and travel insurance (mandatory — please send your policy number before departure).

Meeting point: our office at Av. San Martín 275, El Chaltén, on 17 November at 18:00 for the pre-trip briefing and gear check. Please bring your passport and the signed waiver.
""",
    edits=[
        ("Name: Siobhán Kearney-Walsh\nPassport: PK7730215 (Ireland), exp. 03/2031\n"
         "Date of birth: 22/01/1987\nEmail: siobhan.kw@example.ie\nPhone: +353 85 555 0192",
         "Name: [withheld]\nPassport: [withheld]\nDate of birth: [withheld]\nEmail: [withheld]\n"
         "Phone: [withheld]"),
        ("Condition: epilepsy, well controlled; last seizure in 2019. Medication: levetiracetam 750 mg "
         "twice daily (carries 2 spare days).",
         "Condition and medication: on file with the lead guide."),
        ("Emergency contact: Rónán Kearney (brother), +353 87 555 0140",
         "Emergency contact: on file with the lead guide"),
        ("by card ending 9021", "by card"),
    ],
    base="""
- Remove the lead traveller's name 'Siobhán Kearney-Walsh', passport number, date of birth, e-mail and phone number.
- Remove the medical condition and medication details.
- Remove the emergency contact's name and phone number.
- Generalize the payment card reference 'card ending 9021'.
""",
    smoothed="""
Please redact this participant sheet before it is shared with the porters: remove the traveller's
identity and contact details, her medical condition and medication, the emergency contact and the
card digits. The booking number, trip dates, meeting point, the balance due and the strict
gluten-free diet must stay.
""",
    groups={
        "Traveller Identity & Contact": {
            "lead_traveller_name": "Siobhán Kearney-Walsh",
            "passport_number": "PK7730215",
            "date_of_birth": "22/01/1987",
            "traveller_email": "siobhan.kw@example.ie",
            "traveller_phone": "+353 85 555 0192",
        },
        "Medical Information": {
            "medical_condition": "epilepsy",
            "medication": "levetiracetam 750 mg twice daily",
        },
        "Emergency Contact": {
            "emergency_contact_name": "Rónán Kearney",
            "emergency_contact_phone": "+353 87 555 0140",
        },
        "Payment": {
            "payment_card": "card ending 9021",
            "balance_due": "USD 1,030",
        },
        "Trip Logistics": {
            "booking_number": "FRT-24-1107",
            "trip_dates": "18–21 November 2024",
            "meeting_point": "Av. San Martín 275, El Chaltén",
            "dietary_requirement": "strict gluten-free",
        },
    },
    drop=[
        G("Traveller Identity & Contact", "lead_traveller_name", "passport_number", "date_of_birth",
          "traveller_email", "traveller_phone"),
        G("Medical Information", "medical_condition", "medication"),
        G("Emergency Contact", "emergency_contact_name", "emergency_contact_phone"),
    ],
    abstract=["payment_card"],
    keep=["booking_number", "trip_dates", "meeting_point", "balance_due", "dietary_requirement"],
)

record(
    id="sample-tech-01",
    category="Technical & Operations",
    record_type="IT service desk ticket log for a compromised user account",
    original="""
Ticket INC-0048213 · Priority P2 · Category: Security / Account compromise
Opened: 2024-02-12 08:03 UTC · Requester: Sigrún Þórsdóttir (s.thorsdottir) · Dept: Finance, Reykjavík office
Assigned: IT Service Desk → Security Operations

--- 08:03 Requester (via portal)
I got an MFA push at 6am that I did NOT approve, and then an email saying my mailbox rules had changed. I can still log in but I'm worried. Laptop asset tag FIN-LT-0342.

--- 08:11 A. Lindqvist (Service Desk)
Thanks Sigrún. I've forced a sign-out of all sessions and reset your password; the temporary one was sent by SMS to your number ending 0175. Please don't approve any pushes you didn't start yourself.

--- 08:26 M. Haddad (SecOps)
Sign-in logs show a successful login at 05:58 UTC from 203.0.113.58 (hosting provider, geolocated to Frankfurt) after 14 failed attempts — classic MFA fatigue. An inbox rule named "RSS sync" was created at 06:04, forwarding messages containing "invoice" or "payment" to an external address (billing-dept@example.net). Rule removed. Per the audit log, no messages were forwarded before removal.

--- 08:40 M. Haddad (SecOps)
Blocked the IP at the edge firewall, added the external address to the tenant block list, and enrolled the user in number-matching MFA. The password was last changed 412 days ago and appears in a 2023 breach corpus; likely credential stuffing.

--- 08:52 M. Haddad (SecOps)
Checked the mailbox for other persistence: no OAuth app consents in the last 30 days, no additional forwarding rules, no delegates added. Reviewed sent items from 05:58 to 08:03: nothing sent by the attacker. The finance approvals queue shows no payment changes today; notified the finance lead as a precaution so that any change-of-bank-details requests this week are verified by phone.

--- 09:15 A. Lindqvist (Service Desk)
User confirmed the new login works with number matching. Reminder sent about the phishing report button. Ticket moved to Resolved; SecOps will run a tenant-wide check for similar rules.

Resolution code: SEC-ACCT-RESET · Time to resolve: 1 h 12 min
""",
    edits=[
        ("Requester: Sigrún Þórsdóttir (s.thorsdottir) · Dept: Finance, Reykjavík office",
         "Requester: [user] · Dept: Finance"),
        (" Laptop asset tag FIN-LT-0342.", ""),
        ("Thanks Sigrún.", "Thanks."),
        ("sent by SMS to your number ending 0175", "sent by SMS to your registered number"),
        ("from 203.0.113.58 (hosting provider, geolocated to Frankfurt)",
         "from an external hosting-provider IP address abroad"),
        ("to an external address (billing-dept@example.net)", "to an external address"),
    ],
    base="""
- Remove the requester's name 'Sigrún Þórsdóttir', first name, username, phone digits and laptop asset tag.
- Generalize the attacker IP address '203.0.113.58'.
- Generalize the external forwarding address 'billing-dept@example.net'.
""",
    smoothed="""
We're publishing this ticket as an anonymised lessons-learned write-up: remove everything that
identifies the user (name, username, phone digits, asset tag) and describe the attacker's IP and the
forwarding address only in general terms. The ticket number, the 05:58 UTC login time, the switch to
number-matching MFA and the resolution code should stay.
""",
    groups={
        "Requester Identity": {
            "requester_name": "Sigrún Þórsdóttir",
            "requester_first_name": "Sigrún",
            "requester_username": "s.thorsdottir",
            "phone_last_digits": "0175",
            "asset_tag": "FIN-LT-0342",
        },
        "Attack Indicators": {
            "attacker_ip": "203.0.113.58",
            "forwarding_address": "billing-dept@example.net",
            "login_time": "05:58 UTC",
        },
        "Ticket Handling": {
            "ticket_number": "INC-0048213",
            "mfa_change": "number-matching MFA",
            "resolution_code": "SEC-ACCT-RESET",
        },
    },
    drop=[G("Requester Identity", "requester_name", "requester_first_name", "requester_username",
            "phone_last_digits", "asset_tag")],
    abstract=["attacker_ip", "forwarding_address"],
    keep=["ticket_number", "login_time", "mfa_change", "resolution_code"],
)


def main() -> int:
    ids = [row["id"] for row in ROWS]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate ids")
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(ROWS)} rows to {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
