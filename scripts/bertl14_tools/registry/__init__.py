"""The device's own names: the entity / area / floor registry (names) and the domains a name and an intent accept (domains)."""
