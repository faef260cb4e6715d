from codemod.frontends.cli import app

app(prog_name="inplacefix")
