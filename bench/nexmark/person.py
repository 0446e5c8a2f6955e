"""New people (PersonGenerator): one per 50 events, ids counting up from 1000."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.nexmark.event_kind import FIRST_KIND_FIELD, TIMESTAMP, EventKind, Sources
from bench.nexmark.ids import FIRST_PERSON_ID, PERSON_PROPORTION, last_base0_person_id
from bench.nexmark.text import lengths_of

US_STATES = ["AZ", "CA", "ID", "OR", "WA", "WY"]
US_CITIES = [
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
]
FIRST_NAMES = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"]
LAST_NAMES = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"]
AVERAGE_SIZE = 200  # avgPersonByteSize

_NAMES = pa.array([f"{first} {last}" for first in FIRST_NAMES for last in LAST_NAMES])
_CITIES = pa.array(US_CITIES)
_STATES = pa.array(US_STATES)
_FOUR_DIGITS = pa.array([f"{i:04d}" for i in range(10_000)])

_F = FIRST_KIND_FIELD
NAME, EMAIL_USER, EMAIL_DOMAIN, CARD, CITY, STATE, EXTRA = _F, _F + 1, _F + 3, _F + 5, _F + 6, _F + 7, _F + 8


class Person(EventKind):
    name = "person"
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("name", pa.string()),
            ("emailAddress", pa.string()),
            ("creditCard", pa.string()),
            ("city", pa.string()),
            ("state", pa.string()),
            ("dateTime", TIMESTAMP),
            ("extra", pa.string()),
        ]
    )
    first_offset = 0
    end_offset = PERSON_PROPORTION

    def table(self, ids: np.ndarray, sources: Sources) -> pa.Table:
        draws, text = sources.draws, sources.text
        name = _NAMES.take(draws.below(ids, NAME, len(_NAMES)))
        user = text.next_string(ids, draws, EMAIL_USER, 7)
        domain = text.next_string(ids, draws, EMAIL_DOMAIN, 5)
        email = pc.binary_join_element_wise(user, pc.binary_join_element_wise(domain, "com", "."), "@")
        # 16 random digits from one draw, in four groups of four
        digits = draws.bits(ids, CARD) % np.uint64(10**16)
        groups = [
            _FOUR_DIGITS.take((digits // np.uint64(10 ** (4 * i)) % np.uint64(10_000)).astype(np.int64))
            for i in range(3, -1, -1)
        ]
        card = pc.binary_join_element_wise(*groups, " ")
        city = _CITIES.take(draws.below(ids, CITY, len(_CITIES)))
        state = _STATES.take(draws.below(ids, STATE, len(_STATES)))
        size = 8 + lengths_of(name) + lengths_of(email) + lengths_of(card) + lengths_of(city) + lengths_of(state)
        return pa.table(
            [
                pa.array(last_base0_person_id(ids) + FIRST_PERSON_ID, pa.int64()),
                name,
                email,
                card,
                city,
                state,
                pa.array(sources.clock.micros(ids), TIMESTAMP),
                sources.text.next_extra(ids, draws, EXTRA, size, AVERAGE_SIZE),
            ],
            schema=self.schema,
        )
