# Offline stand-in: every RucioClient() built by AtlasDDMClient / ddm.py is a
# brokerage.crosscheck.jedi fakes.FakeRucioClient; the grid it answers from is set by fakes.install_fake_rucio().
class Client:
    impl = None  # set by fakes.install_fake_rucio()

    def __new__(cls, *args, **kwargs):
        if Client.impl is None:
            raise RuntimeError("offline rucio: no fake client installed")
        return Client.impl()
