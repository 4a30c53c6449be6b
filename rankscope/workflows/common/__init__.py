"""What every workflow does first: the dataset resolved, systems (specs, retrievers, runs) made into
checked runs (:mod:`.systems`), fanned out over a scheduler when given one (:mod:`.fanout`), and the
checks and cutoff tables they share (:mod:`.runs`). Private to the workflows."""
