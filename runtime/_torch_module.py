def to_module(*a): pass
class QuiverModule: pass
