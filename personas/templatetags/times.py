from django import template

from personas.times import shown

register = template.Library()
register.filter("when", shown)
