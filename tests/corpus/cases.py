from dataclasses import dataclass, field


@dataclass
class Case:
    fn: object
    args: tuple
    wrt: tuple = None          # None: every float argument
    kwargs: dict = None        # keyword arguments of the call
    note: str = field(default="")

    @property
    def id(self):
        wrt = "all" if self.wrt is None else "-".join(map(str, self.wrt))
        return f"{self.fn.__name__}[{wrt}]{self.note}"
