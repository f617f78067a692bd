"""BERT pretraining instances: the HDF5 contract (hdf5_format, the one module the writer,
`pipeline inspect`, the trainer's loader and the tests import), instance building (instances),
static masking (masking) and writing (writer)."""
