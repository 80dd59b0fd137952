"""Source of ``tasks/sample/tab_sample.json``: ten fictional court-style documents in TAB's schema.

Every person, place and case here is invented for privasis-bench. Mentions are written inline as
``[[entity|TYPE|IDENTIFIER|CONFIDENTIAL|surface]]`` (``-`` for NOT_CONFIDENTIAL), optionally followed by ``|a1``,
``|a2`` or ``|a3``: a mention only that annotator marked. ``OVERRIDES`` lists where an annotator judged an entity's
identifier type differently. ``build()`` turns it into TAB's JSON (offsets computed, never typed by hand);
``tests/tab/test_tab_sample.py`` checks the shipped file is exactly ``build()``'s output.
"""

from __future__ import annotations

import json
import re

_MARK = re.compile(r"\[\[([^|\]]+)\|([A-Z]+)\|([A-Z_]+)\|([A-Z_-]+)\|([^|\]]+)(?:\|(a\d))?\]\]")

DOCS = [
    ("001-90001", 2004, "CHAMBER", [6], "POL", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|40218/04]]) against the Republic of Poland lodged with the Court by a Polish national, [[2|PERSON|DIRECT|-|Mr Łukasz Wiśniewski]] (“the applicant”), on [[3|DATETIME|QUASI|-|3 March 2004]].

The applicant was represented by [[4|PERSON|QUASI|-|Ms A. Zielińska]], a lawyer practising in [[5|LOC|QUASI|-|Kraków]].

THE FACTS

The applicant was born in [[6|DATETIME|QUASI|-|1961]] and lives in [[7|LOC|QUASI|-|Nowa Huta]]. In [[8|DATETIME|QUASI|-|1998]] [[2|PERSON|DIRECT|-|Mr Wiśniewski]] brought a civil action before the [[9|ORG|NO_MASK|-|Kraków District Court]] against his former employer, [[10|ORG|QUASI|-|Huta Sędzimira Steelworks]]. The proceedings lasted [[11|DATETIME|QUASI|-|six years and two months]].""", {"annotator2": {"9": "QUASI", "11": "NO_MASK"}}),
    ("001-90002", 2009, "CHAMBER", [8, 14], "TUR", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|17745/06]]) against the Republic of Turkey lodged by a Turkish national, [[2|PERSON|DIRECT|-|Mrs Çağla Öztürk]], on [[3|DATETIME|QUASI|-|12 May 2006]].

THE FACTS

The applicant, who is of [[4|DEM|QUASI|ETHNIC|Kurdish]] origin, was born in [[5|DATETIME|QUASI|-|1975]] and lives in [[6|LOC|QUASI|-|Diyarbakır]]. She is a member of the [[7|ORG|QUASI|POLITICS|People’s Labour Party]].

On [[8|DATETIME|QUASI|-|4 June 2005]] [[2|PERSON|DIRECT|-|Mrs Öztürk]] was arrested together with [[9|PERSON|QUASI|-|Mr Rıza Demirtaş]], her [[10|MISC|QUASI|-|brother-in-law]]. The [[11|ORG|NO_MASK|-|Diyarbakır Security Directorate]] held them for [[12|QUANTITY|QUASI|-|four days]]. [[2|PERSON|DIRECT|-|The applicant|a2]] complained of ill-treatment.""", {"annotator2": {"10": None}}),
    ("001-90003", 2011, "CHAMBER", [9], "NOR", ["annotator1", "annotator2", "annotator3"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|5512/09]]) against the Kingdom of Norway lodged by [[2|PERSON|DIRECT|-|Mr Søren Ærøskøbing]], a Norwegian national, on [[3|DATETIME|QUASI|-|20 January 2009]].

THE FACTS

The applicant was born in [[4|DATETIME|QUASI|-|1958]] and lives in [[5|LOC|QUASI|-|Tromsø]]. He is a [[6|DEM|QUASI|BELIEF|Jehovah’s Witness]] and works as a [[7|DEM|QUASI|-|fisherman]].

In [[8|DATETIME|QUASI|-|2007]] the [[9|ORG|NO_MASK|-|Tromsø municipality]] refused [[2|PERSON|DIRECT|-|Mr Ærøskøbing]]’s request to hold meetings in the community hall on [[10|LOC|QUASI|-|Storgata 14]]. [[11|PERSON|QUASI|-|Mrs Ingrid Ødegård]], the mayor, stated that the hall was booked.""", {"annotator2": {"7": "NO_MASK"}, "annotator3": {"11": "DIRECT", "5": None}}),
    ("001-90004", 2013, "GRANDCHAMBER", [8], "ESP", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|33090/11]]) against the Kingdom of Spain lodged by [[2|PERSON|DIRECT|-|Mr José Núñez Peña]] on [[3|DATETIME|QUASI|-|2 April 2011]].

THE FACTS

The applicant, a [[4|DEM|QUASI|-|62-year-old]] retired teacher, lives in [[5|LOC|QUASI|-|Cádiz]]. He is [[6|MISC|QUASI|SEX|homosexual]] and has lived with his partner, [[7|PERSON|QUASI|-|Mr Tomás Ibáñez]], since [[8|DATETIME|QUASI|-|1990]].

After [[7|PERSON|QUASI|-|Mr Ibáñez]] died on [[9|DATETIME|QUASI|-|8 August 2009]], the [[10|ORG|NO_MASK|-|National Social Security Institute]] refused [[2|PERSON|DIRECT|-|Mr Núñez Peña]] a survivor’s pension of [[11|QUANTITY|QUASI|-|EUR 1,240]] per month.""", {"annotator2": {"4": "NO_MASK", "11": None}}),
    ("001-90005", 2015, "CHAMBER", [3], "SRB", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|60071/13]]) against the Republic of Serbia lodged by [[2|PERSON|DIRECT|-|Ms Zoë Đorđević]] on [[3|DATETIME|QUASI|-|9 September 2013]].

THE FACTS

The applicant was born in [[4|DATETIME|QUASI|-|1984]]. She suffers from [[5|MISC|QUASI|HEALTH|type 1 diabetes]] and was detained in [[6|ORG|QUASI|-|Niš District Prison]] from [[7|DATETIME|QUASI|-|March 2012]] to [[8|DATETIME|QUASI|-|May 2013]].

The prison doctor, [[9|PERSON|QUASI|-|Dr M. Petrović]], noted that [[2|PERSON|DIRECT|-|Ms Đorđević]] had lost [[10|QUANTITY|QUASI|HEALTH|eleven kilograms]]. Her complaint to the [[11|ORG|NO_MASK|-|Ombudsman]] was dismissed on [[12|DATETIME|QUASI|-|14 June 2013]].""", {"annotator2": {"6": "DIRECT", "12": "NO_MASK"}}),
    ("001-90006", 2006, "CHAMBER", [10], "FRA", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|2291/03]]) against the French Republic lodged by [[2|PERSON|DIRECT|-|Mr Benoît Lefèvre]] on [[3|DATETIME|QUASI|-|17 December 2002]].

THE FACTS

The applicant is a journalist at the weekly [[4|ORG|QUASI|-|L’Écho du Vercors]], published in [[5|LOC|QUASI|-|Grenoble]]. In an article of [[6|DATETIME|QUASI|-|5 May 2001]] he accused the deputy mayor, [[7|PERSON|QUASI|-|Mr Hervé Moreau]], of favouring his [[8|MISC|QUASI|-|cousin’s construction firm]].

The [[9|ORG|NO_MASK|-|Grenoble Criminal Court]] fined [[2|PERSON|DIRECT|-|Mr Lefèvre]] [[10|QUANTITY|QUASI|-|3,000 euros]]. [[2|PERSON|DIRECT|-|Lefèvre|a1]] appealed.""", {"annotator2": {"8": None}}),
    ("001-90007", 2017, "CHAMBER", [6], "RUS", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|48813/15]]) against the Russian Federation lodged by [[2|PERSON|DIRECT|-|Mr Aleksandr Sergeyevich Kuznetsov]] on [[3|DATETIME|QUASI|-|30 September 2015]].

THE FACTS

The applicant was born in [[4|DATETIME|QUASI|-|1970]] and lives in [[5|LOC|QUASI|-|Yekaterinburg]]. He was a [[6|DEM|QUASI|-|police officer]] until [[7|DATETIME|QUASI|-|2012]].

On [[8|DATETIME|QUASI|-|11 November 2013]] the [[9|ORG|NO_MASK|-|Sverdlovsk Regional Court]] convicted [[2|PERSON|DIRECT|-|Mr Kuznetsov]] of bribery and sentenced him to [[10|QUANTITY|QUASI|-|five years’ imprisonment]]. His lawyer, [[11|PERSON|QUASI|-|Ms Olga Belova]], was not allowed to question [[12|PERSON|QUASI|-|witness K.]].""", {"annotator2": {"6": "DIRECT", "10": "NO_MASK"}}),
    ("001-90008", 2012, "CHAMBER", [8], "GBR", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|12403/10]]) against the United Kingdom lodged by [[2|PERSON|DIRECT|-|Mrs Siobhán O’Connor]] on [[3|DATETIME|QUASI|-|25 February 2010]].

THE FACTS

The applicant, an [[4|DEM|QUASI|ETHNIC|Irish Traveller]], lives on a caravan site near [[5|LOC|QUASI|-|Basildon]] with her [[6|QUANTITY|QUASI|-|four children]].

On [[7|DATETIME|QUASI|-|1 October 2008]] [[8|ORG|QUASI|-|Basildon District Council]] ordered the family to leave the site. [[2|PERSON|DIRECT|-|Mrs O’Connor]]’s social worker, [[9|PERSON|QUASI|-|Mr Gareth Hughes]], reported that her youngest child had [[10|MISC|QUASI|HEALTH|asthma]].""", {"annotator2": {"8": "NO_MASK", "6": "NO_MASK"}}),
    ("001-90009", 2019, "CHAMBER", [11], "HUN", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|7720/17]]) against Hungary lodged by [[2|PERSON|DIRECT|-|Mr Gergő Szőke]] on [[3|DATETIME|QUASI|-|19 January 2017]].

THE FACTS

The applicant, born in [[4|DATETIME|QUASI|-|1991]], is a student in [[5|LOC|QUASI|-|Debrecen]] and a founding member of the association [[6|ORG|QUASI|POLITICS|Szabad Egyetem]].

On [[7|DATETIME|QUASI|-|23 October 2016]] police dispersed a demonstration of [[8|QUANTITY|QUASI|-|about 300 people]] organised by the association. [[2|PERSON|DIRECT|-|Mr Szőke]] was fined [[9|QUANTITY|QUASI|-|HUF 50,000]] by the [[10|ORG|NO_MASK|-|Debrecen District Court]].""", {"annotator2": {"8": None, "5": "DIRECT"}}),
    ("001-90010", 2008, "CHAMBER", [6, 13], "GRC", ["annotator1", "annotator2"], """PROCEDURE

The case originated in an application (no. [[1|CODE|DIRECT|-|26650/06]]) against the Hellenic Republic lodged by [[2|PERSON|DIRECT|-|Mr Nikolaos Papadopoulos]] on [[3|DATETIME|QUASI|-|14 June 2006]].

THE FACTS

The applicant is a [[4|DEM|QUASI|BELIEF|Muslim]] farmer living in [[5|LOC|QUASI|-|Komotini]], in Thrace. In [[6|DATETIME|QUASI|-|1995]] he sued the [[7|ORG|NO_MASK|-|Ministry of Agriculture]] for compensation for [[8|QUANTITY|QUASI|-|12 hectares]] of land expropriated for the [[9|LOC|QUASI|-|Egnatia motorway]].

The proceedings ended with a judgment of the [[10|ORG|NO_MASK|-|Supreme Administrative Court]] served on [[2|PERSON|DIRECT|-|Mr Papadopoulos]] on [[11|DATETIME|QUASI|-|20 December 2005]], [[12|DATETIME|QUASI|-|ten years]] after he had sued.""", {"annotator2": {"12": "NO_MASK", "4": None}}),
]


def _parse(marked: str) -> tuple[str, list[dict]]:
    """Plain text and the inline mentions (offsets into the plain text)."""
    out, mentions, pos = [], [], 0
    for m in _MARK.finditer(marked):
        out.append(marked[pos:m.start()])
        start = sum(len(p) for p in out)
        eid, etype, idt, conf, surface, only = m.groups()
        out.append(surface)
        mentions.append({"eid": eid, "type": etype, "idt": idt, "conf": "NOT_CONFIDENTIAL" if conf == "-" else conf,
                         "start": start, "end": start + len(surface), "surface": surface, "only": only})
        pos = m.end()
    out.append(marked[pos:])
    return "".join(out), mentions


def build() -> list[dict]:
    """The sample as TAB's JSON list of documents."""
    docs = []
    for doc_id, year, branch, articles, country, annotators, marked, overrides in DOCS:
        text, mentions = _parse(marked)
        person = re.sub(r"^(?:Mr|Mrs|Ms)\s+", "", mentions[1]["surface"])
        annotations = {}
        for k, annotator in enumerate(annotators, start=1):
            changed = overrides.get(annotator, {})
            ems, first_of = [], {}
            for m in mentions:
                if (m["only"] and m["only"] != f"a{k}") or (m["eid"] in changed and changed[m["eid"]] is None):
                    continue
                n = len(ems) + 1
                em = {"entity_type": m["type"], "entity_mention_id": f"{doc_id}_a{k}_em{n}",
                      "start_offset": m["start"], "end_offset": m["end"], "span_text": m["surface"],
                      "edit_type": "check", "identifier_type": changed.get(m["eid"], m["idt"]),
                      "entity_id": f"{doc_id}_a{k}_e{m['eid']}", "confidential_status": m["conf"]}
                if k == 2 and m["eid"] in first_of:
                    em["related_mentions"] = [first_of[m["eid"]]]
                first_of.setdefault(m["eid"], em["entity_mention_id"])
                ems.append(em)
            annotations[annotator] = {"entity_mentions": ems}
        docs.append({"annotations": annotations, "dataset_type": "test", "doc_id": doc_id,
                     "meta": {"year": year, "legal_branch": branch, "articles": articles, "countries": country,
                              "applicant": person},
                     "quality_checked": annotators[:1],
                     "task": f"Task: Annotate the document to anonymise the following person: {person}",
                     "text": text})
    return docs


def dumps() -> str:
    """The shipped file's exact contents."""
    return json.dumps(build(), ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(dumps())
