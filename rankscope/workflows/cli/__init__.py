"""The workflow commands, one file each (``compare``, ``tune``, ``diagnose``, ``rag``), each declaring
its options once in a :class:`~rankscope.workflows.cli.command.Command`; the shared options are in
:mod:`.options`. ``rankscope.cli.COMMANDS`` names each command's module."""
