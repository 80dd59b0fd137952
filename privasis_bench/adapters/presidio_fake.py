"""Synthetic replacement for Presidio (``presidio:,operator=synthetic``): a Faker value of the same kind per entity.

The installed Presidio anonymizer has no Faker-based operator of its own, so each entity type gets Presidio's
``custom`` operator with a function that asks Faker for a value of that kind (a name for PERSON, an address for
EMAIL_ADDRESS, ...). A type Faker has nothing for is replaced by ``<TYPE>``, as the ``replace`` operator does.
"""

from __future__ import annotations

from typing import Any

#: Presidio entity type -> Faker provider method.
FAKER_METHODS: dict[str, str] = {
    "PERSON": "name", "EMAIL_ADDRESS": "email", "PHONE_NUMBER": "phone_number", "LOCATION": "city",
    "DATE_TIME": "date", "CREDIT_CARD": "credit_card_number", "IP_ADDRESS": "ipv4", "URL": "url",
    "US_SSN": "ssn", "IBAN_CODE": "iban", "NRP": "country", "ORGANIZATION": "company", "US_BANK_NUMBER": "bban",
    "US_DRIVER_LICENSE": "license_plate", "US_PASSPORT": "passport_number", "US_ITIN": "itin",
    "MAC_ADDRESS": "mac_address", "UUID": "uuid4", "CRYPTO": "sha1", "MEDICAL_LICENSE": "bothify",
    "UK_NHS": "numerify",
}
#: Arguments some methods need to make a value of the right shape.
_METHOD_ARGS: dict[str, dict[str, Any]] = {"bothify": {"text": "??#######"}, "numerify": {"text": "### ### ####"}}


def fake_operators(fake: Any) -> dict[str, Any]:
    """Presidio operator configs: ``custom`` with a Faker value for every type in :data:`FAKER_METHODS`,
    ``<TYPE>`` (Presidio's ``replace``) for any other."""
    from presidio_anonymizer.entities import OperatorConfig

    def maker(method: str) -> Any:
        def make(_original: str) -> str:
            return str(getattr(fake, method)(**_METHOD_ARGS.get(method, {})))
        return make

    operators = {entity: OperatorConfig("custom", {"lambda": maker(method)}) for entity, method in FAKER_METHODS.items()}
    operators["DEFAULT"] = OperatorConfig("replace")
    return operators
