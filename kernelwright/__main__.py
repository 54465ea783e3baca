from kernelwright.cli import app

app()
