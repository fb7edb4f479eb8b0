package io.refpool.core.internal;

/** What a key's slot in the {@link SlotTable} holds: its object's entry, or the creation under way. */
sealed interface Slot permits Entry, Creation {}
